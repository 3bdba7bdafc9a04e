import type { Kysely } from 'kysely'

/**
 * Where each client came from: the management API, RFC 7591 registration or a Client ID Metadata Document. Every
 * client before this came from the management API. The same on both dialects.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('clients')
    .addColumn('source', 'text', (column) => column.notNull().defaultTo('management'))
    .execute()
}
