import { type Kysely, type RawBuilder, sql } from 'kysely'
import type { Clock } from '../platform/clock.js'
import type { DialectFeatures } from '../platform/storage/database.js'
import type { DB } from '../platform/storage/schema.js'
import { deleteBatch } from '../platform/storage/delete-batch.js'
import { transaction } from '../platform/storage/transaction.js'

const DAY_MS = 24 * 3600 * 1000
/** No account keeps anything for less than this: a delivery finished since then is never deleted. */
const SHORTEST_RETENTION_MS = DAY_MS

/**
 * Ids of up to `limit` rows of `table` (aliased `r`) that `condition` says are past retention, found account by
 * account (`s` is the account's settings row). Each account's rows are read from its oldest on an index by account and
 * time, up to the edge of its retention, so a run reads the rows it deletes and few others, however many rows are
 * still kept (migration 0004).
 */
function pastRetention(features: DialectFeatures, table: 'webhook_deliveries' | 'events', time: 'finished_at' | 'created_at', condition: RawBuilder<boolean>, limit: number): RawBuilder<{ id: string }> {
  const rows = sql`${sql.table(table)} as r where r.account_id = s.account_id and ${condition}`
  // Ordered by time, so PostgreSQL walks the index from the oldest and stops at the limit, rather than collect every
  // entry past retention first.
  return features.lateralJoins
    ? sql`select p.id from account_settings as s cross join lateral (select r.id from ${rows} order by ${sql.ref(`r.${time}`)} limit ${limit}) as p limit ${limit}`
    : sql`select r.id from account_settings as s cross join ${rows} limit ${limit}`
}

/** The instant before which an account's rows are past retention; bigint arithmetic, as days in ms overflow int4. */
function retentionStart(now: number): RawBuilder<number> {
  return sql<number>`cast(${now} as bigint) - s.webhook_retention_days * cast(${DAY_MS} as bigint)`
}

/**
 * What the webhook area deletes once nobody needs it. Finished deliveries (succeeded, failed or cancelled) and
 * their attempts go once they finished longer ago than the account's `webhook_retention_days`; events go after
 * the same period once no delivery refers to them; idempotency keys go when their 24 hours are over. Pending
 * and held deliveries are never pruned. Each call deletes one bounded batch.
 */
export class WebhookRetention {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly features: DialectFeatures,
    private readonly clock: Clock,
  ) {}

  async pruneDeliveries(limit: number): Promise<number> {
    const now = this.clock.now()
    return transaction(this.db, async (tx) => {
      const { rows } = await pastRetention(this.features, 'webhook_deliveries', 'finished_at', sql`r.finished_at is not null and r.finished_at < ${retentionStart(now)}`, limit).execute(tx.db)
      if (rows.length === 0) return 0
      // Asked again as the rows are deleted: a retry or a recovery job may have queued one of them since it was
      // read (on PostgreSQL the delete waits for that to commit, then reads the new row). Queued again, a delivery
      // has no finish time, and finished again, a finish time of now; neither is older than a day.
      const deleted = await tx.db
        .deleteFrom('webhook_deliveries')
        .where('id', 'in', rows.map((row) => row.id))
        .where('finished_at', '<', now - SHORTEST_RETENTION_MS)
        .returning('id')
        .execute()
      if (deleted.length === 0) return 0
      const ids = deleted.map((row) => row.id)
      await tx.db.deleteFrom('webhook_attempts').where('delivery_id', 'in', ids).execute()
      return ids.length
    })
  }

  async pruneEvents(limit: number): Promise<number> {
    const now = this.clock.now()
    return transaction(this.db, async (tx) => {
      // PostgreSQL expects most events to have deliveries still (it can't know that retention took them first), so
      // it costs the search high enough to compile it with JIT, which took 120 ms where the search took 3.
      if (this.features.name === 'postgres') await sql`set local jit = off`.execute(tx.db)
      // An event past retention that still has deliveries (held ones, waiting for their endpoint) is read again by
      // each run until they are gone.
      const { rows } = await pastRetention(
        this.features,
        'events',
        'created_at',
        sql`r.created_at < ${retentionStart(now)} and r.fanned_out_at is not null and not exists (select 1 from webhook_deliveries as d where d.event_id = r.id)`,
        limit,
      ).execute(tx.db)
      if (rows.length === 0) return 0
      await tx.db.deleteFrom('events').where('id', 'in', rows.map((row) => row.id)).execute()
      return rows.length
    })
  }

  /**
   * Leases that ran out count for nothing (a worker died, or recorded its outcomes too late); their rows go. On
   * PostgreSQL a row that a completion holds is left to a later run, so that neither waits for the other.
   */
  async pruneLeases(limit: number): Promise<number> {
    return deleteBatch(this.db, this.features, 'webhook_leases', { condition: sql`expires_at <= ${this.clock.now()}`, limit, skipLocked: true })
  }

  async pruneIdempotencyKeys(limit: number): Promise<number> {
    return deleteBatch(this.db, this.features, 'event_idempotency_keys', { condition: sql`expires_at <= ${this.clock.now()}`, orderBy: 'expires_at', limit })
  }
}
