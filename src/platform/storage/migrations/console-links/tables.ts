import type { Kysely, RawBuilder } from 'kysely'

/**
 * Single-use sign-in links to the console (`herald console-link`): each holds a digest of its code, the management
 * scopes it grants and when it lapses.
 */
export async function createConsoleLinkTables(db: Kysely<unknown>, keyText: 'text' | RawBuilder<unknown>): Promise<void> {
  await db.schema
    .createTable('console_links')
    .addColumn('id', keyText, (c) => c.primaryKey())
    .addColumn('account_id', keyText, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('code_hash', keyText, (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('console_links_code_idx').unique().on('console_links').columns(['account_id', 'code_hash']).execute()
  await db.schema.createIndex('console_links_expiry_idx').on('console_links').column('expires_at').execute()
}
