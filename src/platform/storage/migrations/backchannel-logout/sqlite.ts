import type { Kysely } from 'kysely'
import { createBackchannelLogoutTables } from './tables.js'

/** Back-channel logout on SQLite. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createBackchannelLogoutTables(db, 'text')
}
