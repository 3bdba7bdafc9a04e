import { type RawBuilder, sql } from 'kysely'
import pg from 'pg'
import type { FastifyBaseLogger } from 'fastify'
import type { Database } from '../storage/database.js'
import type { Tx } from '../storage/transaction.js'
import { type Backoff, backoffDelay } from '../backoff.js'
import { ThrottledWarning } from '../throttled-warning.js'

/**
 * The channels Herald signals on: cache invalidations, and "there is webhook work" for the delivery workers.
 * Both are PostgreSQL NOTIFY channels between processes and plain callbacks inside one.
 */
export type Channel = 'herald_cache' | 'herald_webhooks'

const CHANNELS: readonly Channel[] = ['herald_cache', 'herald_webhooks']
/** Between attempts to listen again: at most a second, so the caches are trusted again soon after the database is back. */
const RECONNECT_BACKOFF: Backoff = { baseMs: 250, maxMs: 1000 }

type Handler = (payload: string) => void

/** A signal sent by a write that is one autocommitting statement (see `Notifications.inStatement`). */
export interface StatementSignal {
  /** For the statement to evaluate: PostgreSQL's NOTIFY, sent when the statement commits. */
  expression: RawBuilder<void>
  /** Tells this process's handlers; for the caller to run once the statement has returned, if it evaluated `expression`. */
  sent: () => void
}

/**
 * Signals that a transaction changed something, to this process and (on PostgreSQL) to every process sharing
 * the database. The NOTIFY is sent inside the writing transaction, so PostgreSQL delivers it only on commit, and
 * collapses identical ones sent by the same transaction; the in-process handlers run after commit too. One
 * listening connection serves every channel. After it is lost, `onReconnect` handlers run once it is back,
 * because notifications sent meanwhile are gone.
 */
export class Notifications {
  readonly #handlers = new Map<Channel, Handler[]>()
  readonly #reconnectHandlers: Array<() => void> = []
  #client: pg.Client | undefined
  #closed = false
  #reconnectTimer: NodeJS.Timeout | undefined
  /** Attempts to listen again that failed since the connection was lost. */
  #failures = 0
  readonly #retryWarning = new ThrottledWarning('the notification listener could not reconnect; retrying')

  constructor(
    private readonly database: Database,
    private readonly log: FastifyBaseLogger,
  ) {}

  on(channel: Channel, handler: Handler): void {
    const handlers = this.#handlers.get(channel) ?? []
    handlers.push(handler)
    this.#handlers.set(channel, handlers)
  }

  /** Runs after the listening connection was lost and is back: anything may have changed meanwhile. */
  onReconnect(handler: () => void): void {
    this.#reconnectHandlers.push(handler)
  }

  /** Signals `payload` on `channel` once `tx` commits; nothing is sent if it rolls back. */
  async send(tx: Tx, channel: Channel, payload: string): Promise<void> {
    if (this.database.features.notify) await sql`select pg_notify(${channel}, ${payload})`.execute(tx.db)
    tx.afterCommit(() => this.#dispatch(channel, payload))
  }

  /** `send` for a write that is one autocommitting statement rather than a transaction; PostgreSQL only. */
  inStatement(channel: Channel, payload: string): StatementSignal {
    return { expression: sql<void>`pg_notify(${channel}, ${payload})`, sent: () => this.#dispatch(channel, payload) }
  }

  /** Signals outside a transaction: other processes hear it at once. */
  async sendNow(channel: Channel, payload: string): Promise<void> {
    if (this.database.features.notify) await sql`select pg_notify(${channel}, ${payload})`.execute(this.database.db)
    this.#dispatch(channel, payload)
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
      if (CHANNELS.includes(message.channel as Channel)) this.#dispatch(message.channel as Channel, message.payload ?? '')
    })
    client.on('error', (error) => {
      this.log.warn({ err: error }, 'the notification listener lost its connection; reconnecting')
      this.#lost(client)
    })
    client.on('end', () => this.#lost(client))
    try {
      await client.connect()
      for (const channel of CHANNELS) await client.query(`LISTEN ${channel}`)
    } catch (error) {
      await client.end().catch(() => {})
      throw error
    }
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
    // The caches are flushed once it is back, not now: meanwhile their time-to-live bounds what goes unheard, and
    // through a database outage they go on serving what they hold.
    this.#retryLater()
  }

  #retryLater(): void {
    if (this.#closed) return
    this.#reconnectTimer = setTimeout(() => {
      this.#connect().then(
        () => {
          if (this.#failures > 0) this.log.info({ failedAttempts: this.#failures }, 'the notification listener reconnected')
          this.#failures = 0
          this.#reconnected()
        },
        (error: unknown) => {
          this.#failures++
          this.#retryWarning.report(this.log, error)
          this.#retryLater()
        },
      )
    }, backoffDelay(this.#failures + 1, RECONNECT_BACKOFF))
    this.#reconnectTimer.unref()
  }

  #dispatch(channel: Channel, payload: string): void {
    for (const handler of this.#handlers.get(channel) ?? []) handler(payload)
  }

  #reconnected(): void {
    for (const handler of this.#reconnectHandlers) handler()
  }
}
