import { type Kysely, type RawBuilder, sql } from 'kysely'

/**
 * RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0): a logout request waits for the account's logout app
 * with a challenge, then for the browser's return with a verifier; both are stored only as digests.
 */
export async function createLogoutTables(db: Kysely<unknown>, keyText: 'text' | RawBuilder<unknown>): Promise<void> {
  await db.schema
    .createTable('logout_requests')
    .addColumn('id', keyText, (c) => c.primaryKey())
    .addColumn('account_id', keyText, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('client_id', keyText)
    .addColumn('session_id', keyText)
    .addColumn('subject', keyText)
    .addColumn('stage', keyText, (c) => c.notNull().check(sql`stage in ('waiting', 'accepted', 'rejected', 'done')`))
    .addColumn('request', 'text', (c) => c.notNull())
    .addColumn('challenge', keyText)
    .addColumn('handle', keyText)
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('logout_requests_challenge_idx').on('logout_requests').columns(['account_id', 'challenge']).execute()
  await db.schema.createIndex('logout_requests_handle_idx').on('logout_requests').columns(['account_id', 'handle']).execute()
  await db.schema.createIndex('logout_requests_expiry_idx').on('logout_requests').column('expires_at').execute()
}
