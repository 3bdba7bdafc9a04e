import { type Kysely, sql } from 'kysely'
import { createBackchannelLogoutTables } from './tables.js'

/** Back-channel logout on PostgreSQL, in byte order like the baseline's keys. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createBackchannelLogoutTables(db, sql`text collate "C"`)
}
