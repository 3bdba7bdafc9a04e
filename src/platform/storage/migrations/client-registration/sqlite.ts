import type { Kysely } from 'kysely'
import { createRegistrationTables } from './tables.js'

/** Dynamic client registration on SQLite. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createRegistrationTables(db, 'text')
}
