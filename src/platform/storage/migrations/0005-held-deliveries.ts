import { type Kysely, sql } from 'kysely'

/**
 * An endpoint's held deliveries, which enabling it releases and deleting it cancels. Without this index both read
 * every delivery of every endpoint (on PostgreSQL the whole of an index, on SQLite the table) while holding the
 * endpoint's row, which the publishes to it wait for. Rows enter it only while held, so the delivery path, which
 * never holds, writes nothing to it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('webhook_deliveries_held_idx').on('webhook_deliveries').column('endpoint_id').where(sql.ref('status'), '=', 'held').execute()
}
