import type { Kysely, RawBuilder } from 'kysely'

/**
 * Back-channel logout (OpenID Connect Back-Channel Logout 1.0). A client that registers a `backchannel_logout_uri`
 * gets a webhook endpoint of its own (`client_id` set), so its logout tokens go through the webhook area's durable
 * delivery; `session_clients` records which of those clients took part in each browser session, so ending one tells
 * exactly them.
 */
export async function createBackchannelLogoutTables(db: Kysely<unknown>, keyText: 'text' | RawBuilder<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_endpoints').addColumn('client_id', keyText).execute()
  await db.schema.createIndex('webhook_endpoints_client_idx').unique().on('webhook_endpoints').columns(['account_id', 'client_id']).execute()

  await db.schema
    .createTable('session_clients')
    .addColumn('account_id', keyText, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('session_id', keyText, (c) => c.notNull().references('browser_sessions.id').onDelete('cascade'))
    .addColumn('client_id', keyText, (c) => c.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('session_clients_pk', ['session_id', 'client_id'])
    .execute()
  // A client's deletion cascades here.
  await db.schema.createIndex('session_clients_client_idx').on('session_clients').column('client_id').execute()
}
