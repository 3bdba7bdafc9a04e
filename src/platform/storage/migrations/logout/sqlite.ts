import type { Kysely } from 'kysely'
import { createLogoutTables } from './tables.js'

/** Logout requests on SQLite. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createLogoutTables(db, 'text')
}
