import { type Kysely, type RawBuilder, sql } from 'kysely'

/**
 * The device authorization grant (RFC 8628): the account's settings for it, the device authorizations waiting for
 * their user, and the browser-bound verifications (`device-requests` challenges) in which a user types a user code.
 * Device codes, user codes, challenges and browser secrets are stored only as SHA-256 digests.
 */
export async function createDeviceTables(db: Kysely<unknown>, keyText: 'text' | RawBuilder<unknown>): Promise<void> {
  for (const column of ['device_verification_url', 'device_done_url']) {
    await db.schema.alterTable('account_settings').addColumn(column, 'text').execute()
  }
  await db.schema.alterTable('account_settings').addColumn('device_code_ttl', 'integer', (c) => c.notNull().defaultTo(600)).execute()
  await db.schema.alterTable('account_settings').addColumn('device_poll_interval', 'integer', (c) => c.notNull().defaultTo(5)).execute()

  // One row per device authorization request, from the device's request to its tokens. `flow_id` names the sign-in
  // flow that the accepted user code started; that flow's stage says whether the user approved.
  await db.schema
    .createTable('device_authorizations')
    .addColumn('id', keyText, (c) => c.primaryKey())
    .addColumn('account_id', keyText, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('client_id', keyText, (c) => c.notNull())
    .addColumn('device_code_hash', keyText, (c) => c.notNull())
    .addColumn('user_code_hash', keyText, (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('stage', keyText, (c) => c.notNull().check(sql`stage in ('pending', 'verified', 'denied', 'redeemed')`))
    .addColumn('interval', 'integer', (c) => c.notNull())
    .addColumn('flow_id', keyText)
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addForeignKeyConstraint('device_authorizations_account_id_client_id_fkey', ['account_id', 'client_id'], 'clients', ['account_id', 'id'], (c) => c.onDelete('cascade'))
    .addForeignKeyConstraint('device_authorizations_account_id_flow_id_fkey', ['account_id', 'flow_id'], 'authorization_flows', ['account_id', 'id'], (c) => c.onDelete('cascade'))
    .execute()
  await db.schema.createIndex('device_authorizations_device_code_idx').unique().on('device_authorizations').columns(['account_id', 'device_code_hash']).execute()
  await db.schema.createIndex('device_authorizations_user_code_idx').on('device_authorizations').columns(['account_id', 'user_code_hash']).execute()
  await db.schema.createIndex('device_authorizations_expiry_idx').on('device_authorizations').column('expires_at').execute()

  // A verification started in a browser (GET /oauth/device), waiting for the account's app to say which user code the
  // user typed. Its id becomes the id of the sign-in flow it starts, whose browser cookie it set.
  await db.schema
    .createTable('device_challenges')
    .addColumn('id', keyText, (c) => c.primaryKey())
    .addColumn('account_id', keyText, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('challenge_hash', keyText, (c) => c.notNull())
    .addColumn('browser', keyText, (c) => c.notNull())
    .addColumn('address', keyText, (c) => c.notNull())
    .addColumn('stage', keyText, (c) => c.notNull().check(sql`stage in ('waiting', 'accepted', 'rejected', 'spent')`))
    .addColumn('failed_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_failed_at', 'bigint')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('device_challenges_challenge_idx').unique().on('device_challenges').columns(['account_id', 'challenge_hash']).execute()
  // The rate limits on wrong user codes sum the account's recent failures, and among them one address's (RFC 8628 §5.1).
  await db.schema.createIndex('device_challenges_failures_idx').on('device_challenges').columns(['account_id', 'last_failed_at']).execute()
  await db.schema.createIndex('device_challenges_expiry_idx').on('device_challenges').column('expires_at').execute()
}
