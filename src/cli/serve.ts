import type { FastifyBaseLogger } from 'fastify'
import { openHerald } from '../herald.js'
import type { Config } from '../platform/config.js'
import { createLogger } from '../platform/logger.js'
import { buildServer, buildWorkerServer } from '../server.js'

/**
 * Runs the API and the delivery workers until SIGTERM or SIGINT, then stops accepting, lets in-flight requests
 * and webhook attempts finish, and closes the pool.
 */
export async function serve(config: Config): Promise<number> {
  const log = createLogger(config.logLevel)
  const herald = await openHerald({ config, log })
  try {
    const app = await buildServer(herald)
    await app.listen({ port: config.port, host: config.host })
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
 * Runs delivery workers only, for deployments that scale delivery apart from the API (PostgreSQL); with
 * `HERALD_WORKER_PORT`, also answers `/healthz`, `/readyz` and `/metrics` there.
 */
export async function work(config: Config): Promise<number> {
  const log = createLogger(config.logLevel)
  const herald = await openHerald({ config, log })
  try {
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

function describeDatabase(config: Config): string {
  return config.database.dialect === 'sqlite' ? `SQLite ${config.database.filename}` : 'PostgreSQL'
}

function untilStopped(log: FastifyBaseLogger): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      log.info({ signal }, 'shutting down')
      resolve()
    }
    process.once('SIGTERM', stop)
    process.once('SIGINT', stop)
  })
}
