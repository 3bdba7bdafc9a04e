import { type Kysely, PostgresAdapter, sql } from 'kysely'

/**
 * Leasing a delivery changes no indexed column, so that on PostgreSQL the claim's new row versions can be
 * heap-only (HOT) updates, which write no index entries. Before, the lease moved `next_attempt_at` to the
 * lease's end, and every claimed delivery cost a new entry in each of the table's nine indexes: in a profile of
 * the drain, index inserts took over half of PostgreSQL's time. The lease's end now has a column of its own,
 * outside any index. What the queue index used to answer for leased rows, how many deliveries an endpoint has
 * in flight, comes from `webhook_leases`: one row per claim and endpoint, counting the deliveries of that lease
 * whose attempt is not yet recorded.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').addColumn('lease_expires_at', 'bigint').execute()
  // Leases taken before this migration kept their end in next_attempt_at.
  await sql`update webhook_deliveries set lease_expires_at = next_attempt_at where lease_token is not null`.execute(db)
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    // A HOT update needs room on the row's own page. A claim leases a run of deliveries that were written
    // together, so most of a page at once: at 70%, about 70% of leases found room in the drain benchmark, against
    // none with full pages. The table's new pages take about 1.4 times the space.
    await sql`alter table webhook_deliveries set (fillfactor = 70)`.execute(db)
  }

  await db.schema
    .createTable('webhook_leases')
    .addColumn('lease_token', 'text', (c) => c.notNull())
    .addColumn('endpoint_id', 'text', (c) => c.notNull())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('outstanding', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_leases_pk', ['lease_token', 'endpoint_id'])
    .execute()
  await db.schema.createIndex('webhook_leases_endpoint_idx').on('webhook_leases').column('endpoint_id').execute()
  // The leases in flight when this runs: their deliveries count against their endpoints' caps until they end.
  await sql`
    insert into webhook_leases (lease_token, endpoint_id, holder, outstanding, expires_at)
    select lease_token, endpoint_id, 'migration', count(*), max(lease_expires_at) from webhook_deliveries
    where lease_token is not null and status = 'pending' group by lease_token, endpoint_id`.execute(db)
}
