import { type Kysely, PostgresAdapter, sql } from 'kysely'

/**
 * More room on each page of deliveries for the leases of its rows. A claim leases a run of deliveries that were
 * written together, so most of a page in one statement, and a lease is a HOT update (no index entries) only while
 * the page has room for the row's new version: the versions it replaces can't be pruned before the claim commits.
 * Since a worker keeps 512 attempts in flight (HERALD_WEBHOOK_CONCURRENCY), claims reach 500 rows. In the drain
 * benchmark, 64% of leases were HOT at 70% and 76% at 50%; each of the others writes an entry in every index of the
 * table. At 50%, PostgreSQL's CPU per delivery measured 57 µs against 61–63 at 70%, and drains ran 7% faster (three
 * interleaved pairs). New pages take about 1.4 times the space they took at 70% (twice that of full pages); rows
 * already stored keep theirs until they turn over.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) await sql`alter table webhook_deliveries set (fillfactor = 50)`.execute(db)
}
