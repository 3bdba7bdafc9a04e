import { type Kysely, sql } from 'kysely'

/**
 * An endpoint's deliveries that did not succeed (failed, held, pending, cancelled) get an index of their own, which
 * listing an endpoint's failures and a recovery job read; before, both read the endpoint's whole history to find
 * them. Succeeded deliveries, nearly all of an endpoint's, are left out: recording a success writes no entry in it.
 * Events are listed by account, newest first, on an index by account and id; the one by account and creation time
 * read the account's every event and sorted them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('webhook_deliveries_endpoint_status_idx').on('webhook_deliveries').columns(['account_id', 'endpoint_id', 'status', 'id']).where(sql.ref('status'), '<>', 'succeeded').execute()
  await db.schema.createIndex('events_account_id_idx').on('events').columns(['account_id', 'id']).execute()
}
