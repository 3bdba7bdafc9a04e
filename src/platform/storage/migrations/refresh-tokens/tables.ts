import type { Kysely, RawBuilder } from 'kysely'

/**
 * Refresh tokens, rotated on every use, and the revocation of whole grants (an authorization flow, once redeemed, is
 * its grant). Tokens are stored only as SHA-256 digests; a spent token keeps its successor sealed for the account's
 * reuse interval, so a retried refresh gets the same answer.
 */
export async function createRefreshTokenTables(db: Kysely<unknown>, keyText: 'text' | RawBuilder<unknown>): Promise<void> {
  await db.schema
    .alterTable('account_settings')
    .addColumn('refresh_token_reuse_interval', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
  await db.schema.alterTable('authorization_flows').addColumn('revoked_at', 'bigint').execute()

  await db.schema
    .createTable('refresh_tokens')
    .addColumn('id', keyText, (c) => c.primaryKey())
    .addColumn('account_id', keyText, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('grant_id', keyText, (c) => c.notNull().references('authorization_flows.id').onDelete('cascade'))
    .addColumn('client_id', keyText, (c) => c.notNull())
    .addColumn('token_hash', keyText, (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('idle_ttl', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('absolute_expires_at', 'bigint', (c) => c.notNull())
    .addColumn('spent_at', 'bigint')
    .addColumn('successor', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('refresh_tokens_hash_idx').on('refresh_tokens').columns(['account_id', 'token_hash']).execute()
  await db.schema.createIndex('refresh_tokens_grant_idx').on('refresh_tokens').column('grant_id').execute()
  await db.schema.createIndex('refresh_tokens_expiry_idx').on('refresh_tokens').column('expires_at').execute()
}
