import type { Kysely } from 'kysely'
import { createDeviceTables } from './tables.js'

/** The device grant's tables on SQLite. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createDeviceTables(db, 'text')
}
