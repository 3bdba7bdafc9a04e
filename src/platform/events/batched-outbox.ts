import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Awaitable } from '../cache/awaitable.js'
import type { Clock } from '../clock.js'
import type { SqlDialect } from '../storage/dialects/index.js'
import type { DB } from '../storage/schema.js'
import { transaction } from '../storage/transaction.js'
import type { Outbox, SerializedEvent } from './outbox.js'

/** An event waits at most this long to be written, with every other recorded meanwhile. */
const FLUSH_INTERVAL_MS = 20
/** Events per transaction at most; this many waiting are written at once. */
const MAX_BATCH = 1000
/** After a failed write, the events wait this long before the next try. */
const RETRY_MS = 1000
/** Events kept unwritten at most while the database is unavailable; beyond, the oldest are dropped, and logged. */
const MAX_PENDING = 100_000

/** Whether some endpoint of the account subscribes to an event type. */
export type SubscribedTo = (accountId: string, type: string) => Awaitable<boolean>

/**
 * Events announcing work that writes nothing else to the database (a token exchange), recorded in the background,
 * and only where some endpoint of the account subscribes to them: such work comes as often as tokens are issued, for
 * which Herald records nothing, and an event costs about as much as the work itself. A request never waits for its
 * event, and events are written every FLUSH_INTERVAL_MS in one transaction and one statement.
 * On SQLite a transaction's fixed cost (the pages it writes to the WAL) is many times a row's, and a request that
 * waited for its event would make batches only as large as the requests then in flight; written this way an event
 * costs about a row. The price: an event is written up to FLUSH_INTERVAL_MS after its request was answered, so a
 * process that crashes in between loses it (a graceful `close` writes everything), and an unavailable database
 * delays events rather than failing requests.
 */
export class BatchedOutbox {
  /** Serialized at once: a string costs the garbage collector nothing to trace while it waits. */
  #pending: SerializedEvent[] = []
  #timer: NodeJS.Timeout | undefined
  #writing: Promise<void> | undefined
  /** The last write failed: the next waits RETRY_MS, however many events arrive meanwhile. */
  #backingOff = false
  /** Closed with the database: nothing is scheduled any more. */
  #closed = false

  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: SqlDialect,
    private readonly outbox: Outbox,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
    private readonly subscribedTo: SubscribedTo,
  ) {}

  /** `data` must never hold a secret (see Outbox.record). */
  record(accountId: string, type: string, data: object): void {
    const subscribed = this.subscribedTo(accountId, type)
    if (subscribed === true) this.#push({ accountId, type, json: JSON.stringify(data) })
    else if (subscribed !== false) {
      const json = JSON.stringify(data)
      // When the subscriptions can't be read, the event is kept: a subscriber may be missing it.
      subscribed.then((yes) => yes && this.#push({ accountId, type, json }), () => this.#push({ accountId, type, json }))
    }
  }

  #push(event: SerializedEvent): void {
    this.#pending.push(event)
    if (this.#pending.length > MAX_PENDING) {
      const dropped = this.#pending.splice(0, this.#pending.length - MAX_PENDING)
      this.log.error({ dropped: dropped.length, type: event.type }, 'events dropped: the database has been unavailable for too long')
    }
    if (!this.#backingOff) this.#schedule(this.#nextDelay())
  }

  /** Writes every event recorded so far; for shutdown, before the database closes. */
  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#timer)
    this.#timer = undefined
    await this.#writing
    try {
      while (this.#pending.length > 0) await this.#write()
    } catch (error) {
      this.log.error({ err: error, lost: this.#pending.length }, 'events could not be written before shutdown')
    }
  }

  #nextDelay(): number {
    if (this.#backingOff) return RETRY_MS
    return this.#pending.length >= MAX_BATCH ? 0 : FLUSH_INTERVAL_MS
  }

  /** At most one write runs, and one timer waits; a full batch cuts the wait short. */
  #schedule(delayMs: number): void {
    if (this.#writing || this.#closed) return
    if (this.#timer) {
      if (delayMs > 0) return
      clearTimeout(this.#timer)
    }
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      this.#writing = this.#writeNext()
    }, delayMs)
  }

  async #writeNext(): Promise<void> {
    try {
      await this.#write()
      this.#backingOff = false
    } catch (error) {
      this.log.warn({ err: error, waiting: this.#pending.length }, 'events could not be written; trying again')
      this.#backingOff = true
    }
    this.#writing = undefined
    if (this.#pending.length > 0) this.#schedule(this.#nextDelay())
  }

  /** The oldest batch, in one transaction; put back in front when it fails. */
  async #write(): Promise<void> {
    const batch = this.#pending.splice(0, MAX_BATCH)
    try {
      await transaction(this.db, (tx) => this.outbox.recordSerialized(tx, this.dialect, batch, this.clock.now()))
    } catch (error) {
      this.#pending.unshift(...batch)
      throw error
    }
  }
}
