import { type Kysely, type RawBuilder, sql } from 'kysely'
import pg from 'pg'
import type { FastifyBaseLogger } from 'fastify'
import { type Backoff, backoffDelay } from '../../backoff.js'
import type { DB } from '../../storage/schema.js'
import { ThrottledWarning } from '../../throttled-warning.js'
import type { Channel } from '../notifications.js'
import type { NotificationSink, NotificationTransport } from './transport.js'

/** Between attempts to listen again: at most a second, so the caches are trusted again soon after the database is back. */
const RECONNECT_BACKOFF: Backoff = { baseMs: 250, maxMs: 1000 }

/**
 * NOTIFY, sent inside the writing transaction, so PostgreSQL delivers it only on commit and collapses identical ones
 * sent by the same transaction; and one listening connection for every channel, which reconnects after it is lost.
 */
export class PostgresNotificationTransport implements NotificationTransport {
  #client: pg.Client | undefined
  #closed = false
  #reconnectTimer: NodeJS.Timeout | undefined
  /** Attempts to listen again that failed since the connection was lost. */
  #failures = 0
  readonly #retryWarning = new ThrottledWarning('the notification listener could not reconnect; retrying')

  constructor(
    /** The listener's dedicated connection's settings. */
    private readonly connection: pg.PoolConfig | undefined,
    private readonly log: FastifyBaseLogger,
  ) {}

  async notify(db: Kysely<DB>, channel: Channel, payload: string): Promise<void> {
    await sql`select pg_notify(${channel}, ${payload})`.execute(db)
  }

  inStatement(channel: Channel, payload: string): RawBuilder<void> {
    return sql<void>`pg_notify(${channel}, ${payload})`
  }

  async listen(channels: readonly Channel[], sink: NotificationSink): Promise<void> {
    if (!this.connection) return
    await this.#connect(channels, sink)
  }

  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#reconnectTimer)
    const client = this.#client
    this.#client = undefined
    await client?.end().catch(() => {})
  }

  async #connect(channels: readonly Channel[], sink: NotificationSink): Promise<void> {
    const client = new pg.Client(this.connection)
    client.on('notification', (message) => {
      if (channels.includes(message.channel as Channel)) sink.dispatch(message.channel as Channel, message.payload ?? '')
    })
    client.on('error', (error) => {
      this.log.warn({ err: error }, 'the notification listener lost its connection; reconnecting')
      this.#lost(client, channels, sink)
    })
    client.on('end', () => this.#lost(client, channels, sink))
    try {
      await client.connect()
      for (const channel of channels) await client.query(`LISTEN ${channel}`)
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

  #lost(client: pg.Client, channels: readonly Channel[], sink: NotificationSink): void {
    if (this.#closed || this.#client !== client) return
    this.#client = undefined
    client.end().catch(() => {})
    // The caches are flushed once it is back, not now: meanwhile their time-to-live bounds what goes unheard, and
    // through a database outage they go on serving what they hold.
    this.#retryLater(channels, sink)
  }

  #retryLater(channels: readonly Channel[], sink: NotificationSink): void {
    if (this.#closed) return
    this.#reconnectTimer = setTimeout(() => {
      this.#connect(channels, sink).then(
        () => {
          if (this.#failures > 0) this.log.info({ failedAttempts: this.#failures }, 'the notification listener reconnected')
          this.#failures = 0
          sink.reconnected()
        },
        (error: unknown) => {
          this.#failures++
          this.#retryWarning.report(this.log, error)
          this.#retryLater(channels, sink)
        },
      )
    }, backoffDelay(this.#failures + 1, RECONNECT_BACKOFF))
    this.#reconnectTimer.unref()
  }
}
