import { type Kysely, type RawBuilder, sql } from 'kysely'

/**
 * OpenID Connect sign-in: the account's login app and its limits, the authorization flows in progress, the browser
 * sessions Herald remembers and the consents users gave. Challenges, verifiers, codes and session secrets are stored
 * only as SHA-256 digests.
 */
export async function createSignInTables(db: Kysely<unknown>, keyText: 'text' | RawBuilder<unknown>): Promise<void> {
  for (const column of ['login_url', 'consent_url', 'logout_url', 'error_url']) {
    await db.schema.alterTable('account_settings').addColumn(column, 'text').execute()
  }
  await db.schema.alterTable('account_settings').addColumn('login_challenge_ttl', 'integer', (c) => c.notNull().defaultTo(600)).execute()
  await db.schema.alterTable('account_settings').addColumn('session_ttl', 'integer', (c) => c.notNull().defaultTo(30 * 24 * 3600)).execute()
  await db.schema
    .alterTable('account_settings')
    .addColumn('require_par', 'integer', (c) => c.notNull().defaultTo(0).check(sql`require_par in (0, 1)`))
    .execute()

  // One row per authorization request, from authorize (or PAR) to the code's redemption. `challenge` is what the
  // login app holds (the login or consent challenge of the current stage); `handle` is what the browser or the
  // client holds (the PAR request_uri, a verifier, the code).
  await db.schema
    .createTable('authorization_flows')
    .addColumn('id', keyText, (c) => c.primaryKey())
    .addColumn('account_id', keyText, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('client_id', keyText, (c) => c.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('stage', keyText, (c) =>
      c.notNull().check(sql`stage in ('pushed', 'login', 'login_answered', 'consent', 'consent_answered', 'code', 'redeemed', 'done')`),
    )
    .addColumn('request', 'text', (c) => c.notNull())
    .addColumn('browser', keyText)
    .addColumn('challenge', keyText)
    .addColumn('handle', keyText)
    .addColumn('subject', 'text')
    .addColumn('session_id', keyText)
    .addColumn('login', 'text')
    .addColumn('consent', 'text')
    .addColumn('rejection', 'text')
    .addColumn('access_token_jti', 'text')
    .addColumn('access_token_expires_at', 'bigint')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('authorization_flows_challenge_idx').on('authorization_flows').columns(['account_id', 'challenge']).execute()
  await db.schema.createIndex('authorization_flows_handle_idx').on('authorization_flows').columns(['account_id', 'handle']).execute()
  await db.schema.createIndex('authorization_flows_expiry_idx').on('authorization_flows').column('expires_at').execute()

  await db.schema
    .createTable('browser_sessions')
    .addColumn('id', keyText, (c) => c.primaryKey())
    .addColumn('account_id', keyText, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('subject', keyText, (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('auth_time', 'bigint', (c) => c.notNull())
    .addColumn('acr', 'text')
    .addColumn('amr', 'text', (c) => c.notNull())
    .addColumn('remembered', 'integer', (c) => c.notNull().check(sql`remembered in (0, 1)`))
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('browser_sessions_subject_idx').on('browser_sessions').columns(['account_id', 'subject', 'id']).execute()
  await db.schema.createIndex('browser_sessions_expiry_idx').on('browser_sessions').column('expires_at').execute()

  // A consent the user asked to be remembered: a later request of the same client within it shows `skip`.
  await db.schema
    .createTable('consents')
    .addColumn('account_id', keyText, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('subject', keyText, (c) => c.notNull())
    .addColumn('client_id', keyText, (c) => c.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('audience', 'text', (c) => c.notNull())
    .addColumn('session', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('consents_pk', ['account_id', 'subject', 'client_id'])
    .execute()
  await db.schema.createIndex('consents_expiry_idx').on('consents').column('expires_at').execute()
}
