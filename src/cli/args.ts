import { parseArgs as parseArgv } from 'node:util'
import { type CommandName, COMMANDS, flagsOf, isCommandName } from './usage.js'

/** Every flag of the `herald` CLI; each command requires those it needs (`requireFlag`). */
const OPTIONS = {
  name: { type: 'string' },
  account: { type: 'string' },
  scope: { type: 'string' },
  port: { type: 'string' },
  secret: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  verbose: { type: 'boolean' },
} as const

export interface ParsedArgs {
  positionals: string[]
  flags: { name?: string; account?: string; scope?: string; port?: string; secret?: string; json?: boolean; help?: boolean; verbose?: boolean }
}

/** A command line Herald can't run; `command`, where known, is the command whose usage to show with it. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: CommandName,
  ) {
    super(message)
  }
}

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

/** Flags every command takes. */
const COMMON_FLAGS: ReadonlySet<string> = new Set(['help', 'verbose'])

/**
 * The command a command line names (`serve` when it names none), checked against the flags that command takes;
 * undefined for a bare `--help` or `help`, which asks for the overview.
 */
export function commandOf(args: ParsedArgs): CommandName | undefined {
  const [first, second, ...rest] = args.positionals
  if (first === undefined) return args.flags.help ? undefined : 'serve'
  if (first === 'help' && second === undefined) return undefined
  const group = Object.keys(COMMANDS).filter((name) => name.startsWith(`${first} `))
  if (group.length > 0 && second === undefined && args.flags.help) return undefined
  const name = group.length > 0 ? `${first} ${second ?? ''}` : first
  const extra = group.length > 0 ? rest : [second, ...rest].filter((word) => word !== undefined)
  if (!isCommandName(name)) {
    const choices = group.map((command) => command.slice(first.length + 1))
    throw new UsageError(group.length > 0 ? `${first} takes one of: ${choices.join(', ')}` : `unknown command: ${first}`)
  }
  if (extra.length > 0) throw new UsageError(`unexpected ${extra.map((word) => `"${word}"`).join(' ')}`, name)
  const allowed = new Set(flagsOf(name))
  const stray = Object.keys(args.flags).filter((flag) => !allowed.has(flag) && !COMMON_FLAGS.has(flag))
  if (stray.length > 0) throw new UsageError(`herald ${name} takes no ${stray.map((flag) => `--${flag}`).join(', ')}`, name)
  return name
}
