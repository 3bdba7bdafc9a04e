import { type Kysely, sql } from 'kysely'
import { createSignInTables } from './tables.js'

/** Sign-in's tables on PostgreSQL, in byte order like the baseline's keys. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createSignInTables(db, sql`text collate "C"`)
}
