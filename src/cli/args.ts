/** Minimal flag parsing for the `herald` CLI: `--name value`, `--name=value` and boolean `--json`. */
export interface ParsedArgs {
  positionals: string[]
  flags: Map<string, string | true>
}

export function parseArgs(argv: readonly string[]): ParsedArgs {
  const positionals: string[] = []
  const flags = new Map<string, string | true>()
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string
    if (!arg.startsWith('--')) {
      positionals.push(arg)
      continue
    }
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined]
    const next = argv[i + 1]
    if (inline !== undefined) flags.set(name, inline)
    else if (next !== undefined && !next.startsWith('--') && !BOOLEAN_FLAGS.has(name)) {
      flags.set(name, next)
      i++
    } else flags.set(name, true)
  }
  return { positionals, flags }
}

const BOOLEAN_FLAGS = new Set(['json', 'help'])

export class UsageError extends Error {}

export function requireFlag(args: ParsedArgs, name: string): string {
  const value = args.flags.get(name)
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`)
  return value
}
