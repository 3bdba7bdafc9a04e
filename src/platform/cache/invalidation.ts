import { sql } from 'kysely'
import pg from 'pg'
import type { FastifyBaseLogger } from 'fastify'
import type { Database } from '../storage/database.js'
import type { Tx } from '../storage/transaction.js'
import type { Clock } from '../clock.js'
import { TtlCache } from './ttl-cache.js'

/** The in-process caches, by the kind of row they hold. */
export type CacheTopic = 'account' | 'client' | 'keys' | 'settings'

const CHANNEL = 'herald_cache'
const RECONNECT_DELAY_MS = 1000

type Listener = (topic: CacheTopic, key: string) => void
type FlushListener = () => void

/**
 * Tells every cache, in this process and (on PostgreSQL) in every other process sharing the database, that a
 * row changed. The NOTIFY is sent inside the writing transaction, so PostgreSQL delivers it only on commit; the
 * local invalidation runs after commit too. After the listening connection is lost, all caches are flushed,
 * because notifications sent meanwhile are gone. On SQLite (one server process) other processes' changes, such
 * as an operator CLI command, are picked up within the caches' time-to-live.
 */
export class CacheInvalidation {
  readonly #listeners: Listener[] = []
  readonly #flushListeners: FlushListener[] = []
  #client: pg.Client | undefined
  #closed = false
  #reconnectTimer: NodeJS.Timeout | undefined

  constructor(
    private readonly database: Database,
    private readonly log: FastifyBaseLogger,
    private readonly clock: Clock,
    /** The staleness bound of every cache made here, for changes no notification reports. */
    private readonly ttlMs: number,
  ) {}

  /**
   * A read-through cache that forgets a key when `topic` reports it changed, and everything after a flush.
   * `keyOf` maps a changed row's key to the cache's own, for caches that hold a group of rows per key.
   */
  cache<V>(topic: CacheTopic, keyOf: (changed: string) => string = (changed) => changed): TtlCache<V> {
    const cache = new TtlCache<V>(this.ttlMs, this.clock)
    this.onChange((changedTopic, key) => changedTopic === topic && cache.delete(keyOf(key)))
    this.onFlush(() => cache.clear())
    return cache
  }

  onChange(listener: Listener): void {
    this.#listeners.push(listener)
  }

  onFlush(listener: FlushListener): void {
    this.#flushListeners.push(listener)
  }

  /** Records that `key` of `topic` changes in `tx`; caches drop it once the transaction has committed. */
  async changed(tx: Tx, topic: CacheTopic, key: string): Promise<void> {
    if (this.database.features.notify) {
      await sql`select pg_notify(${CHANNEL}, ${`${topic}:${key}`})`.execute(tx.db)
    }
    tx.afterCommit(() => this.#dispatch(topic, key))
  }

  async start(): Promise<void> {
    if (!this.database.features.notify || !this.database.postgres) return
    await this.#connect()
  }

  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#reconnectTimer)
    const client = this.#client
    this.#client = undefined
    await client?.end().catch(() => {})
  }

  async #connect(): Promise<void> {
    const client = new pg.Client(this.database.postgres)
    client.on('notification', (message) => {
      const payload = message.payload ?? ''
      const separator = payload.indexOf(':')
      if (message.channel !== CHANNEL || separator < 0) return
      this.#dispatch(payload.slice(0, separator) as CacheTopic, payload.slice(separator + 1))
    })
    client.on('error', (error) => {
      this.log.warn({ err: error }, 'cache invalidation listener lost its connection; reconnecting')
      this.#lost(client)
    })
    client.on('end', () => this.#lost(client))
    await client.connect()
    await client.query(`LISTEN ${CHANNEL}`)
    if (this.#closed) {
      await client.end()
      return
    }
    this.#client = client
  }

  #lost(client: pg.Client): void {
    if (this.#closed || this.#client !== client) return
    this.#client = undefined
    client.end().catch(() => {})
    // Notifications sent while nobody listens are gone: anything may have changed.
    this.#flush()
    this.#retryLater()
  }

  #retryLater(): void {
    this.#reconnectTimer = setTimeout(() => {
      this.#connect().then(
        () => this.#flush(),
        (error: unknown) => {
          this.log.warn({ err: error }, 'cache invalidation listener could not reconnect; retrying')
          this.#retryLater()
        },
      )
    }, RECONNECT_DELAY_MS)
    this.#reconnectTimer.unref()
  }

  #dispatch(topic: CacheTopic, key: string): void {
    for (const listener of this.#listeners) listener(topic, key)
  }

  #flush(): void {
    for (const listener of this.#flushListeners) listener()
  }
}
