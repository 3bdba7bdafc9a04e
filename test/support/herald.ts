import { randomBytes } from 'node:crypto'
import { createServer } from 'node:net'
import { Writable } from 'node:stream'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject } from 'vitest'
import { type Herald, openHerald } from '../../src/herald.js'
import { loadConfig } from '../../src/platform/config.js'
import { createLogger } from '../../src/platform/logger.js'
import type { App } from '../../src/platform/http/types.js'
import { type Database, openDatabase } from '../../src/platform/storage/database.js'
import { buildServer } from '../../src/server.js'
import { TestClock } from './clock.js'
import { auditTenancy, type TenancyAudit } from './tenancy-audit.js'
import { createTestDatabase, type DialectName, type TestDatabase } from './dialects.js'

export const OPERATOR_TOKEN = 'operator-token-for-tests-0123456789abcdef'

export interface CreatedAccount {
  id: string
  name: string
  issuer: string
  /** The account's base URL as the test reaches it. */
  base: string
  clientId: string
  clientSecret: string
}

export interface TestHerald {
  dialect: DialectName
  /** `http://127.0.0.1:PORT`, also the configured PUBLIC_URL, so issuers match the URLs tests call. */
  origin: string
  herald: Herald
  app: App
  clock: TestClock
  secretKey: string
  /** Every log line Herald wrote, as JSON text. */
  logs: string[]
  database: TestDatabase
  /** Every statement Herald sends is checked for its account (see auditTenancy); closing fails on a violation. */
  tenancy: TenancyAudit
  close(): Promise<void>
}

export interface StartOptions {
  env?: Record<string, string>
  /** Share another Herald's database (a second instance, as a second process would); it is not dropped on close. */
  shareWith?: TestHerald
  /** Start on a database the test has prepared, rather than a fresh one; it is dropped on close. */
  database?: TestDatabase
  /** Run the webhook delivery worker in this instance (the default), as `herald serve` does. */
  worker?: boolean
  /**
   * Have every advance of the clock start a pass of the worker (the default), as if it had been polling all along;
   * false leaves its passes to its own signals, alarms and (real-time) fallback poll, for tests of when it wakes.
   */
  wakeOnAdvance?: boolean
}

/** Runs `suite` once per dialect under test, each in a `describe` named after the dialect. */
export function forEachDialect(suite: (dialect: DialectName) => void): void {
  for (const dialect of inject('dialects')) describe(dialect, () => suite(dialect))
}

/**
 * A fresh, empty database (no migrations) opened for each test of the calling suite, closed and dropped after it,
 * for tests of the storage layer's own pieces; the returned function gives the current test's.
 */
export function useBareDatabase(dialect: DialectName): () => Database {
  let database: TestDatabase | undefined
  let opened: Database | undefined
  beforeEach(async () => {
    database = await createTestDatabase(dialect)
    opened = openDatabase(database.config)
  })
  afterEach(async () => {
    await opened?.close()
    await database?.drop()
    opened = database = undefined
  })
  return () => {
    if (!opened) throw new Error('The database exists only while a test runs')
    return opened
  }
}

/** Starts Herald on a fresh database, listening on 127.0.0.1 on a free port, with an injected clock. */
export async function startHerald(dialect: DialectName, options: StartOptions = {}): Promise<TestHerald> {
  const shared = options.shareWith
  const database = shared?.database ?? options.database ?? (await createTestDatabase(dialect))
  const port = await freePort()
  const origin = `http://127.0.0.1:${port}`
  const secretKey = shared?.secretKey ?? randomBytes(32).toString('base64')
  const config = {
    ...loadConfig({
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: origin,
      HERALD_SECRET_KEY: secretKey,
      HERALD_OPERATOR_TOKEN: OPERATOR_TOKEN,
      LOG_LEVEL: 'info',
      ...options.env,
    }),
    database: database.config,
  }
  const logs: string[] = []
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(chunk.toString('utf8'))
      done()
    },
  })
  const clock = new TestClock(shared?.clock.now())
  const herald = await openHerald({ config, log: createLogger(config.logLevel, sink), clock })
  const tenancy = auditTenancy(herald.database.db)
  await herald.startBackgroundWork()
  const app = await buildServer(herald)
  await app.listen({ port, host: '127.0.0.1' })
  if (options.worker ?? true) {
    herald.webhooks.worker.start()
    if (options.wakeOnAdvance ?? true) clock.onAdvance(() => herald.webhooks.worker.wake())
  }
  return {
    dialect,
    origin,
    herald,
    app,
    clock,
    secretKey,
    logs,
    database,
    tenancy,
    async close() {
      await app.close()
      await herald.close()
      tenancy.stop()
      if (!shared) await database.drop()
      expect(tenancy.violations, 'statements that touch a tenant table without naming an account').toEqual([])
    },
  }
}

/** Starts one Herald for the enclosing `describe` and stops it afterwards; read `.current` inside tests. */
export function useHerald(dialect: DialectName, options: StartOptions = {}): { readonly current: TestHerald } {
  let instance: TestHerald | undefined
  beforeAll(async () => {
    instance = await startHerald(dialect, options)
  })
  afterAll(async () => {
    await instance?.close()
  })
  return {
    get current(): TestHerald {
      if (!instance) throw new Error('Herald is not started yet: use it inside a test or hook')
      return instance
    },
  }
}

/** A TCP port nothing listens on right now, on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}
