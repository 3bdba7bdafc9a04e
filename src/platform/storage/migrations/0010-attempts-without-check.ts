import { type Kysely, PostgresAdapter, sql } from 'kysely'

/**
 * On PostgreSQL, a recorded attempt no longer checks its account's row. The foreign key from `webhook_attempts` to
 * `accounts` ran a query through SPI for every attempt written, to find the account that Herald copies onto the
 * attempt from its delivery's row, whose own foreign key refers to it. That check was 5.7% of PostgreSQL's CPU in the
 * drain benchmark (a `perf` profile; docs/delivery-performance.md). What the key gave besides, the removal of an
 * account's attempts with the account, a trigger on `accounts` now does, so deleting an account by hand still leaves
 * nothing of it behind. It fires after the foreign keys' own cascades (triggers fire in the order of their names, and
 * those are `RI_ConstraintTrigger_…`), so its delete also sees the attempts of a completion that a cascade waited for.
 * SQLite checks a key with one lookup in the same process, and keeps it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
  await sql`alter table webhook_attempts drop constraint webhook_attempts_account_id_fkey`.execute(db)
  await sql`
    create function herald_delete_account_attempts() returns trigger language plpgsql as $$
    begin
      delete from webhook_attempts where account_id = old.id;
      return old;
    end
    $$`.execute(db)
  await sql`create trigger accounts_delete_attempts after delete on accounts for each row execute function herald_delete_account_attempts()`.execute(db)
}
