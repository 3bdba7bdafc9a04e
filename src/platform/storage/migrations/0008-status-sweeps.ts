import { type Kysely, PostgresAdapter, sql } from 'kysely'

/**
 * Endpoint status changes whose deliveries are changed in batches. Enabling, disabling or deleting an endpoint used to
 * change all its waiting deliveries in the request's own transaction, about 30 µs each on PostgreSQL, so a backlog of
 * a million kept the request, and the publishes to the endpoint, waiting for half a minute. Now the request changes
 * one batch and records here what remains, for the workers. The key compares bytes on PostgreSQL, as every indexed
 * text column does since 0007.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const key = db.getExecutor().adapter instanceof PostgresAdapter ? sql`text collate "C"` : sql`text`
  await db.schema
    .createTable('webhook_sweeps')
    .addColumn('id', key, (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('endpoint_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('release', 'hold', 'cancel')`))
    .addColumn('from_status', 'text', (c) => c.notNull().check(sql`from_status in ('pending', 'held')`))
    .addColumn('position', 'text')
    .execute()
}
