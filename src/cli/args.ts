import { parseArgs as parseArgv } from 'node:util'

/** Every flag of the `herald` CLI; each command requires those it needs (`requireFlag`). */
const OPTIONS = {
  name: { type: 'string' },
  account: { type: 'string' },
  scope: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  verbose: { type: 'boolean' },
} as const

export interface ParsedArgs {
  positionals: string[]
  flags: { name?: string; account?: string; scope?: string; json?: boolean; help?: boolean; verbose?: boolean }
}

export class UsageError extends Error {}

/** `--name value`, `--name=value` and the booleans `--json`, `--help` and `--verbose`; an unknown or malformed flag is a UsageError. */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  try {
    const { positionals, values } = parseArgv({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true })
    return { positionals, flags: values }
  } catch (error) {
    if (isParseArgsError(error)) throw new UsageError(error.message)
    throw error
  }
}

/** node:util's parseArgs reports a bad command line with these codes (ERR_PARSE_ARGS_UNKNOWN_OPTION, …). */
function isParseArgsError(error: unknown): error is Error {
  return error instanceof TypeError && 'code' in error && typeof error.code === 'string' && error.code.startsWith('ERR_PARSE_ARGS_')
}

export function requireFlag(args: ParsedArgs, name: 'name' | 'account'): string {
  const value = args.flags[name]
  if (value === undefined || value.trim() === '') throw new UsageError(`--${name} is required`)
  return value
}
