import type { Kysely } from 'kysely'
import { createEndpointStatsTables } from './tables.js'

/** Endpoint statistics on SQLite. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createEndpointStatsTables(db, 'text')
}
