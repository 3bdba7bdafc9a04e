import { type Kysely, sql } from 'kysely'

/**
 * The claim reads the queue through the queue index alone, whatever the statistics. Each of the three partial indexes
 * over pending deliveries answers a claim's question by the planner's reckoning: an endpoint's due deliveries through
 * the index of every due delivery (read in due order, every endpoint's, until one is the endpoint's), or through the
 * index of an endpoint's unsucceeded deliveries (read whole, an account at a time, then sorted). Statistics taken while
 * the queue was empty, which is how autovacuum usually finds a table that keeps a long history of finished deliveries,
 * count none of them, so every such plan looks free and the planner takes any; the wrong ones read the whole backlog
 * per claim. Those two indexes now also carry `account_id <> ''`, true of every row: the queries that use them state
 * it (notForClaims in leases.ts), and a claim, which never names an account, can't use them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_due_idx').execute()
  await db.schema
    .createIndex('webhook_deliveries_due_idx')
    .on('webhook_deliveries')
    .column('next_attempt_at')
    .where(sql.ref('status'), '=', 'pending')
    .where(sql.ref('account_id'), '<>', '')
    .execute()
  await db.schema.dropIndex('webhook_deliveries_endpoint_status_idx').execute()
  await db.schema
    .createIndex('webhook_deliveries_endpoint_status_idx')
    .on('webhook_deliveries')
    .columns(['account_id', 'endpoint_id', 'status', 'id'])
    .where(sql.ref('status'), '<>', 'succeeded')
    .where(sql.ref('account_id'), '<>', '')
    .execute()
}
