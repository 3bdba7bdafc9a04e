import { type InsertQueryBuilder, type InsertResult, sql } from 'kysely'
import { newId } from '../ids.js'
import type { Notifications } from '../notifications/notifications.js'
import type { SqlDialect } from '../storage/dialects/index.js'
import type { DB, EventsTable } from '../storage/schema.js'
import type { Tx } from '../storage/transaction.js'

/**
 * The events outbox. An event is recorded inside the transaction that makes the change it announces, so the
 * change and its event commit together or not at all; the webhook workers are woken once it has committed and
 * fan it out to subscribed endpoints. The request that made the change never waits for that fan-out.
 */
export class Outbox {
  constructor(private readonly notifications: Notifications) {}

  /** `data` describes the resource and must never hold a secret. Answers the event's id. */
  async record(tx: Tx, accountId: string, type: string, data: object, now: number): Promise<string> {
    const [id] = await this.recordAll(tx, [{ accountId, type, data }], now)
    return id!
  }

  /**
   * Several events in one statement and one signal, for work that announces a batch (failed deliveries). Answers
   * their ids, in order.
   */
  async recordAll(tx: Tx, events: ReadonlyArray<{ accountId: string; type: string; data: object }>, now: number): Promise<string[]> {
    if (events.length === 0) return []
    const rows = events.map(({ accountId, type, data }) => eventRow(accountId, type, JSON.stringify(data), now))
    await this.#insert(tx, tx.db.insertInto('events').values(rows))
    return rows.map((row) => row.id)
  }

  /**
   * Events whose data is JSON text already, in one statement over JSON rows (SqlDialect.jsonRows): one statement text
   * and one parameter for a batch of any size, where recordAll's VALUES list builds a query tree node for every cell
   * and is prepared afresh for every batch size. For large batches (see BatchedOutbox).
   */
  async recordSerialized(tx: Tx, dialect: SqlDialect, events: readonly SerializedEvent[], now: number): Promise<void> {
    if (events.length === 0) return
    const rows = dialect.jsonRows(EVENT_COLUMNS, events.map(({ accountId, type, json }) => eventRow(accountId, type, json, now)))
    const names = Object.keys(EVENT_COLUMNS) as Array<keyof typeof EVENT_COLUMNS>
    await this.#insert(tx, tx.db.insertInto('events').columns(names).expression(sql<EventsTable>`select * from ${rows} as e`))
  }

  /** The webhook workers' `events` work signal (webhooks/delivery/wake.ts), sent by the insert itself where it can. */
  async #insert(tx: Tx, insert: InsertQueryBuilder<DB, 'events', InsertResult>): Promise<void> {
    await this.notifications.sendWith(tx, 'herald_webhooks', 'events', async (signal) => {
      await (signal ? insert.returning(signal.as('signalled')).execute() : insert.execute())
    })
  }
}

/** An event to record whose data is serialized already. */
export interface SerializedEvent {
  accountId: string
  type: string
  json: string
}

const EVENT_COLUMNS = { id: 'text', account_id: 'text', type: 'text', data: 'text', created_at: 'bigint', idempotency_key: 'text', fanned_out_at: 'bigint' } as const

function eventRow(accountId: string, type: string, data: string, now: number): EventsTable {
  return { id: newId('evt', now), account_id: accountId, type, data, created_at: now, idempotency_key: null, fanned_out_at: null }
}
