import { type Kysely, PostgresAdapter, sql } from 'kysely'

/**
 * The cache change log: one row per change that in-process caches must forget, written in the changing transaction
 * and read by every process about once a second (see ChangeFeed). On PostgreSQL each row also records its
 * transaction id, since sequence order is not commit order: a reader goes by the oldest transaction still running
 * when it read (the snapshot's xmin), so a change committed late is never passed over.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`create table cache_changes (
      seq bigint generated always as identity primary key,
      topic text collate "C" not null,
      key text collate "C" not null,
      changed_at bigint not null,
      txid xid8 not null default pg_current_xact_id()
    )`.execute(db)
    await db.schema.createIndex('cache_changes_txid_idx').on('cache_changes').column('txid').execute()
  } else {
    await sql`create table cache_changes (
      seq integer primary key autoincrement,
      topic text not null,
      key text not null,
      changed_at integer not null
    )`.execute(db)
  }
  await db.schema.createIndex('cache_changes_changed_at_idx').on('cache_changes').column('changed_at').execute()
}
