import { type Kysely, sql } from 'kysely'
import { createRefreshTokenTables } from './tables.js'

/** Refresh tokens on PostgreSQL, in byte order like the baseline's keys. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createRefreshTokenTables(db, sql`text collate "C"`)
}
