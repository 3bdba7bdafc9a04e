import { type Kysely, type RawBuilder, sql } from 'kysely'
import type { Clock } from '../platform/clock.js'
import type { SqlDialect } from '../platform/storage/dialects/index.js'
import type { DB } from '../platform/storage/schema.js'
import { transaction } from '../platform/storage/transaction.js'
import { retentionSearchFor } from './sql/index.js'
import type { RetentionSearch } from './sql/retention-search.js'

/** An event pruneEvents read past retention, and whether deliveries still refer to it (1) or not (0). */
interface EventRead {
  id: string
  account_id: string
  created_at: number
  kept: number
}

const DAY_MS = 24 * 3600 * 1000
/** No account keeps anything for less than this: a delivery finished since then is never deleted. */
const SHORTEST_RETENTION_MS = DAY_MS

/** The instant before which an account's rows are past retention; bigint arithmetic, as days in ms overflow int4. */
function retentionStart(now: number): RawBuilder<number> {
  return sql<number>`cast(${now} as bigint) - s.webhook_retention_days * cast(${DAY_MS} as bigint)`
}

/**
 * What the webhook area deletes once nobody needs it. Finished deliveries (succeeded, failed or cancelled) and
 * their attempts go once they finished longer ago than the account's `webhook_retention_days`; events go after
 * the same period once no delivery refers to them; idempotency keys go when their 24 hours are over. Pending
 * and held deliveries are never pruned. Each call deletes one bounded batch. Cross-account: it goes through every
 * account, each by its own retention period.
 */
export class WebhookRetention {
  /** Per account, the event (created_at, id) pruneEvents read last; see there. */
  readonly #eventCursors = new Map<string, [number, string]>()
  readonly #search: RetentionSearch

  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: SqlDialect,
    private readonly clock: Clock,
  ) {
    this.#search = retentionSearchFor(dialect)
  }

  async pruneDeliveries(limit: number): Promise<number> {
    const now = this.clock.now()
    return transaction(this.db, async (tx) => {
      const { rows } = await this.#search.pastRetention<{ id: string }>({
        table: 'webhook_deliveries',
        columns: sql`r.id`,
        condition: sql`r.finished_at is not null and r.finished_at < ${retentionStart(now)}`,
        order: sql`r.finished_at`,
        limit,
      }).execute(tx.db)
      if (rows.length === 0) return 0
      // Asked again as the rows are deleted: a retry or a recovery job may have queued one of them since it was
      // read (on PostgreSQL the delete waits for that to commit, then reads the new row). Queued again, a delivery
      // has no finish time, and finished again, a finish time of now; neither is older than a day.
      const deleted = await tx.db
        .deleteFrom('webhook_deliveries')
        .where('id', 'in', rows.map((row) => row.id))
        .where('finished_at', '<', now - SHORTEST_RETENTION_MS)
        .returning(['id', 'event_id'])
        .execute()
      if (deleted.length === 0) return 0
      const ids = deleted.map((row) => row.id)
      await tx.db.deleteFrom('webhook_attempts').where('delivery_id', 'in', ids).execute()
      // An event goes with its last delivery: it is past retention too, having been created before the delivery
      // finished. pruneEvents would find it later, but only after reading past every event still waiting for one.
      const events = [...new Set(deleted.map((row) => row.event_id))].sort()
      // Locked first (PostgreSQL), so that of two processes deleting an event's last two deliveries at once, the
      // second asks once the first has committed, and sees that none is left; asked at once, both saw the other's.
      await this.dialect.lockForUpdate(tx.db.selectFrom('events').select('id').where('id', 'in', events).orderBy('id'))
      await tx.db
        .deleteFrom('events')
        .where('id', 'in', events)
        .where((eb) => eb.not(eb.exists(eb.selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.event_id', '=', 'events.id'))))
        .execute()
      return ids.length
    })
  }

  /**
   * Deletes events past retention that no delivery refers to (most go with their last delivery, see
   * pruneDeliveries; these are the ones that had none). Events past retention that still have deliveries, held ones
   * or ones that finished late, are read past: each account's search goes on from where the last one stopped, and
   * starts again from the oldest once it has read to the end, so a run reads at most `limit` events however many
   * wait. Answers how many events the run dealt with, deleted or read past: a full batch means more may be waiting.
   */
  async pruneEvents(limit: number): Promise<number> {
    const now = this.clock.now()
    const cursors = this.dialect.jsonRows({ account_id: 'text', created_at: 'bigint', id: 'text' }, [...this.#eventCursors].map(([accountId, [createdAt, id]]) => ({ account_id: accountId, created_at: createdAt, id })))
    return transaction(this.db, async (tx) => {
      const { rows: read } = await this.#search.pastRetention<EventRead>({
        table: 'events',
        columns: sql`r.id, r.account_id, r.created_at, case when exists (select 1 from webhook_deliveries as d where d.event_id = r.id) then 1 else 0 end as kept`,
        // The cursor as a row comparison, which both dialects apply to the index (account_id, created_at, id).
        condition: sql`r.created_at < ${retentionStart(now)} and r.fanned_out_at is not null
          and (r.created_at, r.id) > (coalesce(c.created_at, -1), coalesce(c.id, ''))`,
        order: sql`r.created_at, r.id`,
        limit,
        join: sql`left join ${cursors} as c on c.account_id = s.account_id`,
      }).execute(tx.db)
      const unreferenced = read.filter((row) => Number(row.kept) === 0).map((row) => row.id)
      if (unreferenced.length > 0) await tx.db.deleteFrom('events').where('id', 'in', unreferenced).execute()
      tx.afterCommit(() => this.#moveEventCursors(read, limit))
      return read.length
    })
  }

  /**
   * Each account's search goes on after the last event it read. When a run read fewer than `limit` events, nothing
   * was left out, and every account starts again from its oldest event the next time.
   */
  #moveEventCursors(read: readonly EventRead[], limit: number): void {
    if (read.length < limit) {
      this.#eventCursors.clear()
      return
    }
    for (const row of read) {
      const at = Number(row.created_at)
      const cursor = this.#eventCursors.get(row.account_id)
      if (!cursor || at > cursor[0] || (at === cursor[0] && row.id > cursor[1])) this.#eventCursors.set(row.account_id, [at, row.id])
    }
  }

  /**
   * Leases that ran out count for nothing (a worker died, or recorded its outcomes too late); their rows go. On
   * PostgreSQL a row that a completion holds is left to a later run, so that neither waits for the other.
   */
  async pruneLeases(limit: number): Promise<number> {
    return this.dialect.deleteBatch(this.db, 'webhook_leases', { condition: sql`expires_at <= ${this.clock.now()}`, limit, skipLocked: true })
  }

  async pruneIdempotencyKeys(limit: number): Promise<number> {
    return this.dialect.deleteBatch(this.db, 'event_idempotency_keys', { condition: sql`expires_at <= ${this.clock.now()}`, orderBy: 'expires_at', limit })
  }
}
