import { type Kysely, sql } from 'kysely'
import { createRegistrationTables } from './tables.js'

/** Dynamic client registration on PostgreSQL, in byte order like the baseline's keys. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createRegistrationTables(db, sql`text collate "C"`)
}
