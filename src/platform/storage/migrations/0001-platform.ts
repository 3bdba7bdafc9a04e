import type { Kysely } from 'kysely'
import { sql } from 'kysely'

/** Accounts, settings, keys, clients, scopes, the events outbox, token revocations and used client assertion ids. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('active', 'disabled')`))
    .addColumn('admin_client_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('account_settings')
    .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
    .addColumn('access_token_ttl', 'integer', (c) => c.notNull())
    .addColumn('refresh_token_idle_ttl', 'integer', (c) => c.notNull())
    .addColumn('refresh_token_absolute_ttl', 'integer', (c) => c.notNull())
    .addColumn('id_token_ttl', 'integer', (c) => c.notNull())
    .addColumn('authorization_code_ttl', 'integer', (c) => c.notNull())
    .addColumn('default_audience', 'text')
    .addColumn('access_token_signing_alg', 'text', (c) => c.notNull().check(sql`access_token_signing_alg in ('ES256', 'RS256')`))
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('signing_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('alg', 'text', (c) => c.notNull().check(sql`alg in ('ES256', 'RS256')`))
    .addColumn('public_jwk', 'text', (c) => c.notNull())
    .addColumn('private_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('signs_from', 'bigint', (c) => c.notNull())
    .addColumn('retires_at', 'bigint')
    .addColumn('published_until', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .execute()
  await db.schema.createIndex('signing_keys_account_idx').on('signing_keys').columns(['account_id', 'alg', 'signs_from']).execute()

  await db.schema
    .createTable('clients')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('management', 'standard')`))
    .addColumn('secret_hash', 'text')
    .addColumn('token_endpoint_auth_method', 'text', (c) => c.notNull())
    .addColumn('grant_types', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('credentials_changed_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('clients_account_idx').on('clients').columns(['account_id', 'id']).execute()

  // Which clients may request which scope: what makes "a scope in use can't be deleted" a simple lookup.
  await db.schema
    .createTable('client_scopes')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('scope', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('client_scopes_pk', ['account_id', 'scope', 'client_id'])
    .execute()

  await db.schema
    .createTable('scopes')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('oidc', 'custom')`))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('scopes_pk', ['account_id', 'name'])
    .execute()

  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('events_account_idx').on('events').columns(['account_id', 'created_at', 'id']).execute()

  await db.schema
    .createTable('token_revocations')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('jti', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('token_revocations_pk', ['account_id', 'jti'])
    .execute()
  await db.schema.createIndex('token_revocations_expiry_idx').on('token_revocations').column('expires_at').execute()

  // RFC 7523 §3: a client assertion's jti is accepted once; the row lives until the assertion could no longer be used.
  await db.schema
    .createTable('client_assertion_jtis')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('jti', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('client_assertion_jtis_pk', ['account_id', 'client_id', 'jti'])
    .execute()
  await db.schema.createIndex('client_assertion_jtis_expiry_idx').on('client_assertion_jtis').column('expires_at').execute()
}
