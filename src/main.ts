#!/usr/bin/env node
import { commandOf, type ParsedArgs, parseArgs, UsageError } from './cli/args.js'
import { listen } from './cli/listen.js'
import { type CommandName, commandHelp, overview } from './cli/usage.js'
import { describeStartupFailure } from './cli/startup-failure.js'
import { ConfigError, loadConfig } from './platform/config.js'
import { ProblemError } from './platform/http/problems.js'

/** The command being run, for the usage shown with a UsageError that does not name its own. */
let current: CommandName | undefined

async function main(argv: readonly string[]): Promise<number> {
  const args = parseArgs(argv)
  current = commandOf(args)
  if (current === undefined) {
    console.log(overview())
    return 0
  }
  if (args.flags.help) {
    console.log(commandHelp(current))
    return 0
  }
  // The receiver needs none of the server's configuration, so a bad DATABASE_URL in its terminal can't stop it.
  if (current === 'listen') return runListen(args)
  const config = loadConfig()
  try {
    // Loaded only by the commands that work on the database, so that help and listen start at once.
    const { runCommand } = await import('./cli/run-command.js')
    return await runCommand(config, args, current)
  } catch (error) {
    const line = describeStartupFailure(error, { database: config.database, portVariable: current === 'worker' ? 'HERALD_WORKER_PORT' : 'PORT' })
    if (line === undefined) throw error
    console.error(`herald: ${line}`)
    if (args.flags.verbose || config.logLevel === 'debug' || config.logLevel === 'trace') console.error(error)
    return 1
  }
}

async function runListen(args: ParsedArgs): Promise<number> {
  try {
    return await listen({ secret: args.flags.secret, port: args.flags.port }, (line) => console.log(line))
  } catch (error) {
    const line = describeStartupFailure(error, { portVariable: '--port' })
    if (line === undefined) throw error
    console.error(`herald: ${line}`)
    if (args.flags.verbose) console.error(error)
    return 1
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    if (error instanceof ConfigError) console.error(error.message)
    else if (error instanceof UsageError) console.error(`herald: ${error.message}\n\n${usageFor(error.command ?? current)}`)
    else if (error instanceof ProblemError) console.error(`herald: ${error.message}`)
    else console.error(error)
    process.exitCode = error instanceof UsageError || error instanceof ConfigError ? 2 : 1
  },
)

function usageFor(command: CommandName | undefined): string {
  return command === undefined ? overview() : commandHelp(command)
}
