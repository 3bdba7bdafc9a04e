#!/usr/bin/env node
import { openHeraldCore } from './herald.js'
import { accountCommands, type Command, consoleLink, keyCommands } from './cli/commands.js'
import { type ParsedArgs, parseArgs, UsageError } from './cli/args.js'
import { describeStartupFailure } from './cli/startup-failure.js'
import { type Config, ConfigError, loadConfig } from './platform/config.js'
import { createLogger, logDestination } from './platform/logger.js'
import { ProblemError } from './platform/http/problems.js'
import { migrateToLatest } from './platform/storage/migrate.js'
import { BASELINE } from './platform/storage/migrations/index.js'
import { openDatabase } from './platform/storage/database.js'
import { serve, work } from './cli/serve.js'

const USAGE = `Usage: herald <command>

  serve                                  run the API and webhook delivery (the default)
  worker                                 run webhook delivery only (several may share PostgreSQL)
  migrate                                apply pending database migrations and exit
  accounts create --name NAME [--json]   create an account; prints its management credentials once
  accounts list [--json]
  accounts disable --account ID
  accounts enable --account ID
  accounts reset-admin --account ID      issue a new secret for the account's management client
  keys rotate --account ID               publish new signing keys; they sign after the JWKS cache time
  console-link --account ID [--scope S]  print a single-use sign-in link to the account's console (webhook scopes by default)

  --verbose                              on a start-up failure, print the error's stack too (as LOG_LEVEL=debug does)

Configuration comes from environment variables; see the README.`

const GROUPS: Record<string, Record<string, Command>> = { accounts: accountCommands, keys: keyCommands }
/** Commands of one word. */
const SINGLES: Record<string, Command> = { 'console-link': consoleLink }

async function main(argv: readonly string[]): Promise<number> {
  const args = parseArgs(argv)
  const [command = 'serve', sub] = args.positionals
  if (args.flags.help || command === 'help') {
    console.log(USAGE)
    return 0
  }
  const config = loadConfig()
  try {
    return await runCommand(config, args, command, sub)
  } catch (error) {
    const line = describeStartupFailure(error, { database: config.database, portVariable: command === 'worker' ? 'HERALD_WORKER_PORT' : 'PORT' })
    if (line === undefined) throw error
    console.error(`herald: ${line}`)
    if (args.flags.verbose || config.logLevel === 'debug' || config.logLevel === 'trace') console.error(error)
    return 1
  }
}

async function runCommand(config: Config, args: ParsedArgs, command: string, sub: string | undefined): Promise<number> {
  if (command === 'serve') return serve(config)
  if (command === 'worker') return work(config)
  if (command === 'migrate') {
    const database = openDatabase(config.database)
    try {
      const { applied, adoptedPreBaseline } = await migrateToLatest(database)
      if (adoptedPreBaseline) console.log(`Recorded the migrations of a development build as ${BASELINE}, whose schema they made`)
      console.log(applied.length ? `Applied ${applied.join(', ')}` : 'The database is up to date')
    } finally {
      await database.close()
    }
    return 0
  }
  const run = sub === undefined && Object.hasOwn(SINGLES, command) ? SINGLES[command] : GROUPS[command]?.[sub ?? '']
  if (!run) throw new UsageError(`unknown command: ${[command, sub].filter(Boolean).join(' ')}`)
  // Results go to stdout (so --json output stays parseable); warnings go to stderr.
  const log = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, logDestination(2))
  // Migrating, as `serve` does, keeps `herald migrate` optional: an account may be created before any server ran.
  const herald = await openHeraldCore({ config, log })
  try {
    await run(herald, args, (line) => console.log(line))
  } finally {
    await herald.close()
  }
  return 0
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    if (error instanceof ConfigError) console.error(error.message)
    else if (error instanceof UsageError) console.error(`herald: ${error.message}\n\n${USAGE}`)
    else if (error instanceof ProblemError) console.error(`herald: ${error.message}`)
    else console.error(error)
    process.exitCode = error instanceof UsageError || error instanceof ConfigError ? 2 : 1
  },
)
