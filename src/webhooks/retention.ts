import { type Kysely, type RawBuilder, sql } from 'kysely'
import type { Clock } from '../platform/clock.js'
import type { DialectFeatures } from '../platform/storage/database.js'
import type { DB } from '../platform/storage/schema.js'
import { transaction } from '../platform/storage/transaction.js'

const DAY_MS = 24 * 3600 * 1000
/** No account keeps anything for less than this, so older rows are the only candidates an index must find. */
const SHORTEST_RETENTION_MS = DAY_MS

/** The instant before which an account's rows are past retention; bigint arithmetic, as days in ms overflow int4. */
function retentionStart(now: number, days: 's.webhook_retention_days'): RawBuilder<number> {
  return sql<number>`cast(${now} as bigint) - ${sql.ref(days)} * cast(${DAY_MS} as bigint)`
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
      const rows = await tx.db
        .selectFrom('webhook_deliveries as d')
        .innerJoin('account_settings as s', 's.account_id', 'd.account_id')
        .select('d.id')
        .where('d.finished_at', 'is not', null)
        .where('d.finished_at', '<', now - SHORTEST_RETENTION_MS)
        .where('d.finished_at', '<', retentionStart(now, 's.webhook_retention_days'))
        .limit(limit)
        .execute()
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
    const rows = await this.db
      .selectFrom('events as e')
      .innerJoin('account_settings as s', 's.account_id', 'e.account_id')
      .select('e.id')
      .where('e.created_at', '<', now - SHORTEST_RETENTION_MS)
      .where('e.fanned_out_at', 'is not', null)
      .where('e.created_at', '<', retentionStart(now, 's.webhook_retention_days'))
      .where((eb) => eb.not(eb.exists(eb.selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.event_id', '=', 'e.id'))))
      .limit(limit)
      .execute()
    if (rows.length === 0) return 0
    await this.db.deleteFrom('events').where('id', 'in', rows.map((row) => row.id)).execute()
    return rows.length
  }

  /**
   * Leases that ran out count for nothing (a worker died, or recorded its outcomes too late); their rows go. On
   * PostgreSQL a row that a completion holds is left to a later run, so that neither waits for the other.
   */
  async pruneLeases(limit: number): Promise<number> {
    let batch = this.db.selectFrom('webhook_leases').select(['lease_token', 'endpoint_id']).where('expires_at', '<=', this.clock.now()).limit(limit)
    if (this.features.rowLocks) batch = batch.forUpdate().skipLocked()
    const result = await this.db
      .deleteFrom('webhook_leases')
      .where(({ eb, refTuple }) => eb(refTuple('lease_token', 'endpoint_id'), 'in', batch.$asTuple('lease_token', 'endpoint_id')))
      .executeTakeFirst()
    return Number(result.numDeletedRows)
  }

  async pruneIdempotencyKeys(limit: number): Promise<number> {
    const batch = this.db.selectFrom('event_idempotency_keys').select(['account_id', 'key']).where('expires_at', '<=', this.clock.now()).orderBy('expires_at').limit(limit)
    const result = await this.db
      .deleteFrom('event_idempotency_keys')
      .where(({ eb, refTuple }) => eb(refTuple('account_id', 'key'), 'in', batch.$asTuple('account_id', 'key')))
      .executeTakeFirst()
    return Number(result.numDeletedRows)
  }
}
