import { type Kysely, sql } from 'kysely'
import { createLogoutTables } from './tables.js'

/** Logout requests on PostgreSQL, in byte order like the baseline's keys. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createLogoutTables(db, sql`text collate "C"`)
}
