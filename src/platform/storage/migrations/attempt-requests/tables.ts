import type { Kysely } from 'kysely'

/**
 * What each attempt sent that can't be worked out later: the URL it went to (an endpoint's URL may change) and its
 * exact `webhook-signature` header (a secret rotation makes a recomputed one differ). The body is the event's and the
 * other headers follow from the delivery and the start time. Both null on attempts recorded before, and on those that
 * sent nothing or nothing known (`signing_failed`, `worker_lost`); the signature alone on a back-channel logout token,
 * which has none. The same on both dialects; SQLite adds one column per statement.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_attempts').addColumn('request_url', 'text').execute()
  await db.schema.alterTable('webhook_attempts').addColumn('request_signature', 'text').execute()
}
