import { type RawBuilder, sql } from 'kysely'
import type { FastifyBaseLogger } from 'fastify'
import type { Database } from '../storage/database.js'
import type { Tx } from '../storage/transaction.js'
import { notificationTransportFor } from './sql/index.js'
import type { NotificationTransport } from './sql/transport.js'

/**
 * The channels Herald signals on: cache invalidations, and "there is webhook work" for the delivery workers.
 * Both are PostgreSQL NOTIFY channels between processes and plain callbacks inside one.
 */
export type Channel = 'herald_cache' | 'herald_webhooks'

const CHANNELS: readonly Channel[] = ['herald_cache', 'herald_webhooks']

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
  readonly #transport: NotificationTransport

  constructor(
    private readonly database: Database,
    log: FastifyBaseLogger,
  ) {
    this.#transport = notificationTransportFor(database, log)
  }

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
    await this.#transport.notify(tx.db, channel, payload)
    tx.afterCommit(() => this.#dispatch(channel, payload))
  }

  /**
   * `send`, carried by a statement of `tx` that `write` runs: it evaluates the signal's expression, when there is one
   * (PostgreSQL's NOTIFY, in its RETURNING), which spares the signal a round trip of its own.
   */
  async sendWith<T>(tx: Tx, channel: Channel, payload: string, write: (signal: RawBuilder<void> | undefined) => Promise<T>): Promise<T> {
    const result = await write(this.#transport.inStatement(channel, payload))
    tx.afterCommit(() => this.#dispatch(channel, payload))
    return result
  }

  /** `send` for a write that is one autocommitting statement rather than a transaction; PostgreSQL only. */
  inStatement(channel: Channel, payload: string): StatementSignal {
    return { expression: sql<void>`pg_notify(${channel}, ${payload})`, sent: () => this.#dispatch(channel, payload) }
  }

  /** Signals outside a transaction: other processes hear it at once. */
  async sendNow(channel: Channel, payload: string): Promise<void> {
    await this.#transport.notify(this.database.db, channel, payload)
    this.#dispatch(channel, payload)
  }

  async start(): Promise<void> {
    await this.#transport.listen(CHANNELS, { dispatch: (channel, payload) => this.#dispatch(channel, payload), reconnected: () => this.#reconnected() })
  }

  close(): Promise<void> {
    return this.#transport.close()
  }

  #dispatch(channel: Channel, payload: string): void {
    for (const handler of this.#handlers.get(channel) ?? []) handler(payload)
  }

  #reconnected(): void {
    for (const handler of this.#reconnectHandlers) handler()
  }
}
