import type { Kysely } from 'kysely'
import { createSignInTables } from './tables.js'

/** Sign-in's tables on SQLite. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createSignInTables(db, 'text')
}
