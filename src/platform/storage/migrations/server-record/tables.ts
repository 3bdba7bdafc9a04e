import { type Kysely, sql } from 'kysely'

/**
 * What the last `herald serve` on this database serves as: its public URL, under which the CLI prints issuers and
 * console links. One row (id 1); the same on both dialects.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('herald_server')
    .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn('public_url', 'text', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .execute()
}
