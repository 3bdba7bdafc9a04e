import { openHeraldCore } from '../herald.js'
import type { Config } from '../platform/config.js'
import { createLogger, logDestination } from '../platform/logger.js'
import { migrateToLatest } from '../platform/storage/migrate.js'
import { BASELINE } from '../platform/storage/migrations/index.js'
import { openDatabase } from '../platform/storage/database.js'
import type { ParsedArgs } from './args.js'
import { accountCommands, type Command, consoleLink, keyCommands } from './commands.js'
import { serve, work } from './serve.js'
import type { CommandName } from './usage.js'

const GROUPS: Record<string, Record<string, Command>> = { accounts: accountCommands, keys: keyCommands }
/** Commands of one word. */
const SINGLES: Record<string, Command> = { 'console-link': consoleLink }

/** Runs a command that works on the database (every one but `listen`) and resolves with its exit code. */
export async function runCommand(config: Config, args: ParsedArgs, command: Exclude<CommandName, 'listen'>): Promise<number> {
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
  const [group = '', sub] = command.split(' ')
  const run = sub === undefined ? SINGLES[command] : GROUPS[group]?.[sub]
  if (!run) throw new Error(`herald ${command} has no implementation`)
  // Results go to stdout (so --json output stays parseable); warnings go to stderr.
  const log = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, logDestination(2))
  // Migrating, as `serve` does, keeps `herald migrate` optional: an account may be created before any server ran.
  const herald = await openHeraldCore({ config, log, followServer: true })
  try {
    await run(herald, args, (line) => console.log(line))
  } finally {
    await herald.close()
  }
  return 0
}
