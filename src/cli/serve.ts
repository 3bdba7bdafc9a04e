import type { FastifyBaseLogger } from 'fastify'
import { openHerald } from '../herald.js'
import type { Config } from '../platform/config.js'
import { boundHeapGrowth } from '../platform/heap-growth.js'
import { createLogger } from '../platform/logger.js'
import { recordPublicUrl } from '../platform/server-record.js'
import { isDatabaseUnavailable } from '../platform/storage/unavailable.js'
import { buildServer, buildWorkerServer } from '../server.js'

/**
 * Runs the API and the delivery workers until SIGTERM or SIGINT, then stops accepting, lets in-flight requests
 * and webhook attempts finish, and closes the pool.
 */
export async function serve(config: Config): Promise<number> {
  const log = createLogger(config.logLevel)
  surviveStrayDatabaseErrors(log)
  boundHeapGrowth()
  const herald = await openHerald({ config, log })
  warnOfLocalDelivery(config, log)
  try {
    await herald.startBackgroundWork()
    const app = await buildServer(herald)
    await app.listen({ port: config.port, host: config.host })
    await recordPublicUrl(herald.database.db, config.publicUrl, herald.clock)
    herald.webhooks.worker.start()
    log.info(`Herald is serving ${config.publicUrl} on ${describeDatabase(config)}`)
    await untilStopped(log)
    await app.close()
  } finally {
    // Also when the port can't be had: the pool and the LISTEN connection would keep the process alive.
    await herald.close()
  }
  return 0
}

/**
 * Runs delivery workers only, until SIGTERM or SIGINT: beside `serve` on either database, or several of them to scale
 * delivery apart from the API on PostgreSQL; with `HERALD_WORKER_PORT`, also answers `/healthz`, `/readyz` and
 * `/metrics` there.
 */
export async function work(config: Config): Promise<number> {
  const log = createLogger(config.logLevel)
  surviveStrayDatabaseErrors(log)
  boundHeapGrowth()
  const herald = await openHerald({ config, log })
  warnOfLocalDelivery(config, log)
  try {
    await herald.startBackgroundWork()
    const server = config.workerPort === undefined ? undefined : await buildWorkerServer(herald)
    const address = await server?.listen({ port: config.workerPort, host: config.host })
    herald.webhooks.worker.start()
    log.info(`Herald is delivering webhooks from ${describeDatabase(config)}${address ? `; health and metrics at ${address}` : ''}`)
    await untilStopped(log)
    await server?.close()
  } finally {
    await herald.close()
  }
  return 0
}

/**
 * DESIGN: no database error ends a long-running process. Every query's failure is handled where it is made; should
 * one escape as an unhandled rejection all the same, an outage must not turn it into an exit, which nothing would
 * restart. It is logged as the bug it is. Any other unhandled rejection still ends the process, as Node's default does.
 */
function surviveStrayDatabaseErrors(log: FastifyBaseLogger): void {
  process.on('unhandledRejection', (reason) => {
    if (!isDatabaseUnavailable(reason)) throw reason
    log.error({ err: reason }, 'a database error went unhandled')
  })
}

/** The development setup delivers to receivers on this machine over http unless told otherwise; say so once. */
function warnOfLocalDelivery(config: Config, log: FastifyBaseLogger): void {
  if (!config.development || !config.allowHttpOutbound) return
  log.warn('development setup: webhook endpoints may be http receivers on this machine (127.0.0.1, ::1); with HERALD_SECRET_KEY set, on PostgreSQL or with NODE_ENV=production they must be public https URLs')
}

function describeDatabase(config: Config): string {
  return config.database.dialect === 'sqlite' ? `SQLite ${config.database.filename}` : 'PostgreSQL'
}

function untilStopped(log: FastifyBaseLogger): Promise<void> {
  // Nothing else need keep the process alive: a worker on SQLite without HERALD_WORKER_PORT has no socket open, and
  // its timers are unref'd so they never hold up a shutdown.
  const alive = setInterval(() => {}, 2 ** 31 - 1)
  return new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      clearInterval(alive)
      log.info({ signal }, 'shutting down')
      resolve()
    }
    process.once('SIGTERM', stop)
    process.once('SIGINT', stop)
  })
}
