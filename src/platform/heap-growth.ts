import { setFlagsFromString } from 'node:v8'

/**
 * How far V8 lets its old generation grow past what the last full collection kept, in percent. On a machine with
 * memory to spare, V8's own rule lets it reach four times the live heap between full collections, so a long-running
 * server's memory would follow the machine rather than the caches' bound (HERALD_CACHE_SIZE). 30% is the factor V8
 * applies itself when asked to save memory: full collections come more often, and each costs what the live heap
 * costs to mark, which the bounded caches keep bounded.
 */
export const HEAP_GROWING_PERCENT = 30

/** For the long-running commands; an operator who starts Node with `--heap-growing-percent` keeps their own value. */
export function boundHeapGrowth(execArgv: readonly string[] = process.execArgv): boolean {
  if (execArgv.some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg))) return false
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`)
  return true
}
