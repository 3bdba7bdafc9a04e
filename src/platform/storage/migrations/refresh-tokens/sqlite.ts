import type { Kysely } from 'kysely'
import { createRefreshTokenTables } from './tables.js'

/** Refresh tokens on SQLite. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createRefreshTokenTables(db, 'text')
}
