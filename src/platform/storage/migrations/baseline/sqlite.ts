import { type Kysely, sql } from 'kysely'
import { createTables } from './tables.js'

/** The first release's schema on SQLite. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createTables(db, {
    // SQLite compares text byte by byte already (BINARY), and knows no collation "C".
    keyText: 'text',
    // A key check is one lookup in the same process.
    attemptsReferenceAccounts: true,
  })
  await createCacheChanges(db)
}

/** The cache change log (see ChangeFeed): one connection writes at a time, so `seq` order is commit order. */
async function createCacheChanges(db: Kysely<unknown>): Promise<void> {
  await sql`create table cache_changes (
    seq integer primary key autoincrement,
    topic text not null,
    key text not null,
    changed_at integer not null
  )`.execute(db)
  await db.schema.createIndex('cache_changes_changed_at_idx').on('cache_changes').column('changed_at').execute()
}
