import type { Kysely, RawBuilder } from 'kysely'

/**
 * Dynamic client registration (RFC 7591, RFC 7592): the account's registration mode and policy, the initial access
 * tokens the management API makes, and one row per registered client holding its registration access token. Tokens
 * are stored only as SHA-256 digests.
 */
export async function createRegistrationTables(db: Kysely<unknown>, keyText: 'text' | RawBuilder<unknown>): Promise<void> {
  const settings = () => db.schema.alterTable('account_settings')
  await settings().addColumn('registration', 'text', (c) => c.notNull().defaultTo('disabled')).execute()
  await settings().addColumn('registration_scope', 'text', (c) => c.notNull().defaultTo('openid profile email offline_access')).execute()
  await settings().addColumn('registration_grant_types', 'text', (c) => c.notNull().defaultTo('["authorization_code","refresh_token"]')).execute()
  await settings().addColumn('registration_max_clients', 'integer', (c) => c.notNull().defaultTo(1000)).execute()
  await settings().addColumn('registration_prune_after_days', 'integer').execute()
  await settings().addColumn('registration_rate_limit', 'integer', (c) => c.notNull().defaultTo(10)).execute()

  await db.schema
    .createTable('registration_tokens')
    .addColumn('id', keyText, (c) => c.primaryKey())
    .addColumn('account_id', keyText, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('token_hash', keyText, (c) => c.notNull())
    .addColumn('scope', 'text')
    .addColumn('grant_types', 'text')
    .addColumn('max_uses', 'integer', (c) => c.notNull())
    .addColumn('uses', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('registration_tokens_account_idx').unique().on('registration_tokens').columns(['account_id', 'id']).execute()
  await db.schema.createIndex('registration_tokens_hash_idx').unique().on('registration_tokens').columns(['account_id', 'token_hash']).execute()
  await db.schema.createIndex('registration_tokens_expiry_idx').on('registration_tokens').column('expires_at').execute()

  // Goes with its client; keeps the ceiling it registered under for its updates. `last_used_at` moves at most once a day (see ClientUse); the pruner reads it by its index.
  await db.schema
    .createTable('client_registrations')
    .addColumn('account_id', keyText, (c) => c.notNull())
    .addColumn('client_id', keyText, (c) => c.notNull())
    .addColumn('access_token_hash', keyText, (c) => c.notNull())
    .addColumn('initial_token_id', keyText)
    .addColumn('scope_ceiling', 'text', (c) => c.notNull())
    .addColumn('grant_types_ceiling', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('client_registrations_pk', ['account_id', 'client_id'])
    .addForeignKeyConstraint('client_registrations_account_id_client_id_fkey', ['account_id', 'client_id'], 'clients', ['account_id', 'id'], (c) => c.onDelete('cascade'))
    .execute()
  await db.schema.createIndex('client_registrations_last_used_idx').on('client_registrations').column('last_used_at').execute()
}
