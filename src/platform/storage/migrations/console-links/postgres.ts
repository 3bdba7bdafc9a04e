import { type Kysely, sql } from 'kysely'
import { createConsoleLinkTables } from './tables.js'

/** Console sign-in links on PostgreSQL, in byte order like the baseline's keys. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createConsoleLinkTables(db, sql`text collate "C"`)
}
