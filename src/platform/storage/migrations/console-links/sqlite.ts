import type { Kysely } from 'kysely'
import { createConsoleLinkTables } from './tables.js'

/** Console sign-in links on SQLite. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createConsoleLinkTables(db, 'text')
}
