export interface Backoff {
  /** The wait after the first failure, before jitter. */
  baseMs: number
  /** The longest wait, however many failures came before: it bounds how long work waits once the cause is gone. */
  maxMs: number
}

/**
 * How long to wait after the `failures`-th failure in a row (from 1): doubling from `baseMs` up to `maxMs`, then
 * drawn from its upper half ("equal jitter"), so processes that failed together don't retry in step.
 */
export function backoffDelay(failures: number, { baseMs, maxMs }: Backoff, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, failures - 1))
  return Math.round(ceiling / 2 + (random() * ceiling) / 2)
}
