import { type Kysely, sql } from 'kysely'
import { createDeviceTables } from './tables.js'

/** The device grant's tables on PostgreSQL, in byte order like the baseline's keys. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createDeviceTables(db, sql`text collate "C"`)
}
