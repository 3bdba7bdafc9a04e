import { type Kysely, sql } from 'kysely'

/** The account setting that lets a client_id be the URL of a Client ID Metadata Document; off by default. */
export async function addSetting(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('account_settings')
    .addColumn('client_id_metadata_documents', 'integer', (c) => c.notNull().defaultTo(0).check(sql`client_id_metadata_documents in (0, 1)`))
    .execute()
}
