import { type Kysely, sql } from 'kysely'
import { createTables } from './tables.js'

/** The first release's schema on PostgreSQL. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createTables(db, {
    // Byte order, as on SQLite, whatever collation the database was created with: these values are ids, codes and
    // names, whose order is no one's language, and a locale's comparison (strcoll) in every index search costs CPU.
    keyText: sql`text collate "C"`,
    // A lease is a heap-only update only while its row's page has room for the new version, and a claim leases most
    // of a page at once (rows written together): at 45% a page of deliveries has room for the leases of all its rows.
    deliveriesStorage: sql`with (fillfactor = 45)`,
    // The key's check would cost a query per attempt written; the attempt's delivery refers to the account already.
    // The trigger below removes an account's attempts with it instead.
    attemptsReferenceAccounts: false,
  })
  await deleteAttemptsWithTheirAccount(db)
  await createCacheChanges(db)
}

/**
 * What the foreign key's cascade would do. The trigger fires after the foreign keys' own cascades (triggers fire in
 * the order of their names, and those are `RI_ConstraintTrigger_…`), so its delete also sees the attempts of a
 * completion that a cascade waited for.
 */
async function deleteAttemptsWithTheirAccount(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function herald_delete_account_attempts() returns trigger language plpgsql as $$
    begin
      delete from webhook_attempts where account_id = old.id;
      return old;
    end
    $$`.execute(db)
  await sql`create trigger accounts_delete_attempts after delete on accounts for each row execute function herald_delete_account_attempts()`.execute(db)
}

/**
 * The cache change log (see ChangeFeed). Each row records its transaction id, since sequence order is not commit
 * order: a reader goes by the oldest transaction still running when it read (the snapshot's xmin), so a change
 * committed late is never passed over.
 */
async function createCacheChanges(db: Kysely<unknown>): Promise<void> {
  await sql`create table cache_changes (
    seq bigint generated always as identity primary key,
    topic text collate "C" not null,
    key text collate "C" not null,
    changed_at bigint not null,
    txid xid8 not null default pg_current_xact_id()
  )`.execute(db)
  await db.schema.createIndex('cache_changes_txid_idx').on('cache_changes').column('txid').execute()
  await db.schema.createIndex('cache_changes_changed_at_idx').on('cache_changes').column('changed_at').execute()
}
