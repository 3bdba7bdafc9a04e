import type { Kysely } from 'kysely'
import type { Clock } from '../../platform/clock.js'
import type { StatementSignal } from '../../platform/notifications/notifications.js'
import { madeBefore, newId } from '../../platform/ids.js'
import type { DB } from '../../platform/storage/schema.js'
import { type Tx, transaction } from '../../platform/storage/transaction.js'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import type { EndpointStore } from '../endpoints/endpoint-store.js'
import { matchesPattern } from '../events/event-types.js'
import { insertDeliveries, type NewDelivery } from './new-deliveries.js'
import type { WakeSignal } from './wake.js'

export interface FannedEvent {
  id: string
  account_id: string
  type: string
}

/**
 * Turns events into deliveries: one per subscribed endpoint whose patterns match, `pending` for an active
 * endpoint and `held` for a disabled one (see insertDeliveries). It runs in the transaction that marks the events
 * fanned out, so an event is fanned out exactly once: published events in their publishing transaction, outbox
 * events in a batch claimed by a worker, never by the request that recorded them. Cross-account: a batch holds
 * several accounts' events, and each delivery carries its event's account.
 */
export class FanOut {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: SqlDialect,
    private readonly endpoints: EndpointStore,
    private readonly wake: WakeSignal,
    private readonly clock: Clock,
  ) {}

  /** Creates the deliveries of `events`, published in `tx`, in it; answers how many. */
  async deliver(tx: Tx, events: readonly FannedEvent[], now: number): Promise<number> {
    return this.#deliver(tx, events, now, false)
  }

  async #deliver(tx: Tx, events: readonly FannedEvent[], now: number, fromOutbox: boolean): Promise<number> {
    const planned = await this.#plan(tx.db, events, now, fromOutbox)
    if (planned.length === 0) return 0
    const { rows } = await insertDeliveries(this.dialect, planned).execute(tx.db)
    // Held deliveries wait for their endpoint; only pending ones are work for a worker.
    if (rows.some((row) => row.status === 'pending')) await this.wake.send(tx, 'deliveries')
    return rows.length
  }

  /**
   * `deliver` for a caller that writes everything in one statement of its own (PostgreSQL): the deliveries of
   * `events` to insert with insertDeliveries, and the wake-up that statement must evaluate if it inserts a pending one.
   */
  async planForStatement(events: readonly FannedEvent[], now: number): Promise<{ rows: NewDelivery[]; wake: StatementSignal | undefined }> {
    const rows = await this.#plan(this.db, events, now, false)
    return { rows, wake: rows.length > 0 ? this.wake.inStatement('deliveries') : undefined }
  }

  /**
   * One delivery per subscribed endpoint whose patterns match. An event from the outbox was recorded some time before
   * a worker came to it, and goes only to the subscriptions made before it: else one made in between would get it or
   * not as the worker's timing fell. Their ids say which came first (to the millisecond between two processes).
   * `db` is the caller's transaction when there is one.
   */
  async #plan(db: Kysely<DB>, events: readonly FannedEvent[], now: number, fromOutbox: boolean): Promise<NewDelivery[]> {
    const rows: NewDelivery[] = []
    for (const event of events) {
      const routes = await this.endpoints.routes(db, event.account_id)
      const matched = new Set<string>()
      for (const route of routes) {
        if ((!fromOutbox || madeBefore(route.subscriptionId, event.id)) && route.patterns.some((pattern) => matchesPattern(pattern, event.type))) matched.add(route.endpointId)
      }
      for (const endpointId of matched) {
        rows.push({ id: newId('dlv', now), account_id: event.account_id, event_id: event.id, event_type: event.type, endpoint_id: endpointId, created_at: now })
      }
    }
    return rows
  }

  /**
   * Fans out up to `limit` events waiting in the outbox, oldest first; answers how many events it took. On
   * PostgreSQL, concurrent workers skip each other's batches rather than wait for them.
   */
  async drainOutbox(limit: number): Promise<number> {
    return transaction(this.db, (tx) => this.#drain(tx, limit))
  }

  /** Cross-account: the outbox holds every account's events. */
  async #drain(tx: Tx, limit: number): Promise<number> {
    const waiting = tx.db.selectFrom('events').select(['id', 'account_id', 'type']).where('fanned_out_at', 'is', null).orderBy('created_at').limit(limit)
    const events = await this.dialect.forUpdate(waiting, { skipLocked: true }).execute()
    if (events.length === 0) return 0
    const now = this.clock.now()
    await this.#deliver(tx, events, now, true)
    await tx.db.updateTable('events').set({ fanned_out_at: now }).where('id', 'in', events.map((event) => event.id)).execute()
    return events.length
  }
}
