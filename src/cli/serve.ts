import { openHerald } from '../herald.js'
import type { Config } from '../platform/config.js'
import { createLogger } from '../platform/logger.js'
import { buildServer } from '../server.js'

/** Runs the API until SIGTERM or SIGINT, then stops accepting, lets in-flight requests finish and closes the pool. */
export async function serve(config: Config): Promise<number> {
  const log = createLogger(config.logLevel)
  const herald = await openHerald({ config, log })
  const app = await buildServer(herald)
  await app.listen({ port: config.port, host: config.host })
  const where = config.database.dialect === 'sqlite' ? `SQLite ${config.database.filename}` : 'PostgreSQL'
  log.info(`Herald is serving ${config.publicUrl} on ${where}`)

  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      log.info({ signal }, 'shutting down')
      resolve()
    }
    process.once('SIGTERM', stop)
    process.once('SIGINT', stop)
  })
  await app.close()
  await herald.close()
  return 0
}
