import { newId } from '../ids.js'
import type { Notifications } from '../notifications/notifications.js'
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
    const rows = events.map(({ accountId, type, data }) => ({ id: newId('evt', now), account_id: accountId, type, data: JSON.stringify(data), created_at: now, idempotency_key: null, fanned_out_at: null }))
    const insert = tx.db.insertInto('events').values(rows)
    // The webhook workers' `events` work signal (webhooks/delivery/wake.ts), sent by the insert itself where it can.
    await this.notifications.sendWith(tx, 'herald_webhooks', 'events', async (signal) => {
      await (signal ? insert.returning(signal.as('signalled')).execute() : insert.execute())
    })
    return rows.map((row) => row.id)
  }
}
