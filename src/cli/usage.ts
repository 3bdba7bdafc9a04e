/** What each `herald` command does and takes: `herald --help` lists them, `herald COMMAND --help` shows one. */
interface CommandUsage {
  /** The command and its flags, as typed. */
  synopsis: string
  summary: string
  /** Every flag it takes, with its meaning. */
  flags: Readonly<Record<string, string>>
}

type Flag = 'name' | 'account' | 'scope' | 'json' | 'port' | 'secret'

const JSON_FLAG = { json: 'print the result as JSON' }

export const COMMANDS = {
  serve: {
    synopsis: 'serve',
    summary: 'run the API and webhook delivery (the default); the other commands follow its PUBLIC_URL',
    flags: {},
  },
  worker: { synopsis: 'worker', summary: 'run webhook delivery only (several may share PostgreSQL)', flags: {} },
  migrate: { synopsis: 'migrate', summary: 'apply pending database migrations and exit', flags: {} },
  'accounts create': {
    synopsis: 'accounts create --name NAME [--json]',
    summary: "create an account; prints its management client's credentials, once",
    flags: { name: "the account's name", ...JSON_FLAG },
  },
  'accounts list': { synopsis: 'accounts list [--json]', summary: 'list the accounts', flags: JSON_FLAG },
  'accounts disable': { synopsis: 'accounts disable --account ID [--json]', summary: 'disable an account: its endpoints answer 404 and its deliveries wait', flags: { account: "the account's id", ...JSON_FLAG } },
  'accounts enable': { synopsis: 'accounts enable --account ID [--json]', summary: 'enable a disabled account', flags: { account: "the account's id", ...JSON_FLAG } },
  'accounts reset-admin': {
    synopsis: 'accounts reset-admin --account ID [--json]',
    summary: "give the account's management client a new secret; the old one stops working",
    flags: { account: "the account's id", ...JSON_FLAG },
  },
  'keys rotate': {
    synopsis: 'keys rotate --account ID [--json]',
    summary: 'publish new signing keys; they sign once the JWKS cache time has passed',
    flags: { account: "the account's id", ...JSON_FLAG },
  },
  'console-link': {
    synopsis: 'console-link --account ID [--scope S] [--json]',
    summary: "print a single-use sign-in link to the account's console, valid for 10 minutes",
    flags: { account: "the account's id", scope: 'the management scopes it grants, space-separated (default: the webhook scopes)', ...JSON_FLAG },
  },
  listen: {
    synopsis: 'listen --secret whsec_… [--port N]',
    summary: 'receive webhooks on this machine, verify their signatures and print them',
    flags: { secret: "the endpoint's signing secret (GET /webhooks/endpoints/{id}/secret)", port: 'the port to listen on (default 9000)' },
  },
} as const satisfies Record<string, CommandUsage & { flags: Partial<Record<Flag, string>> }>

export type CommandName = keyof typeof COMMANDS

const COMMON = '  --verbose  on a start-up failure, print the error\'s stack too (as LOG_LEVEL=debug does)\n  --help     show a command\'s flags: herald COMMAND --help'

export function overview(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length)) + 2
  const lines = Object.entries(COMMANDS).map(([name, command]) => `  ${name.padEnd(width)}${command.summary}`)
  return `Usage: herald <command>\n\n${lines.join('\n')}\n\n${COMMON}\n\nConfiguration comes from environment variables; see the README.`
}

/** `herald NAME --help`: the command's synopsis, what it does and each of its flags. */
export function commandHelp(name: CommandName): string {
  const { synopsis, summary, flags } = COMMANDS[name]
  const entries: [string, string][] = Object.entries(flags)
  const width = Math.max(0, ...entries.map(([flag]) => flag.length)) + 4
  const flagLines = entries.map(([flag, meaning]) => `  --${flag.padEnd(width - 2)}${meaning}`)
  return [`Usage: herald ${synopsis}`, '', summary, ...(flagLines.length ? ['', ...flagLines] : [])].join('\n')
}

export function isCommandName(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name)
}

/** The flags `name` takes, besides the common `--help` and `--verbose`. */
export function flagsOf(name: CommandName): readonly string[] {
  return Object.keys(COMMANDS[name].flags)
}
