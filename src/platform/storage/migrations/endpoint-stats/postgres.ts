import { type Kysely, sql } from 'kysely'
import { createEndpointStatsTables } from './tables.js'

/** Endpoint statistics on PostgreSQL, in byte order like the baseline's keys. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createEndpointStatsTables(db, sql`text collate "C"`)
}
