import { type Kysely, PostgresAdapter, sql } from 'kysely'

/**
 * Room on each page of deliveries for the leases of all its rows, not most of them (see 0009). A lease adds 56
 * bytes to its row (the token, when it was taken, when it ends): a delivery of a short event type takes 204 bytes
 * of a page (200 for the row, 4 for its line pointer), and its leased version 260. At 50%, a page took 19 such
 * rows and had room for the new versions of 16, so a claim that leased the whole page wrote 3 of its leases as
 * non-HOT updates, each an entry in nine indexes; at 45% a page takes 17 and has room for all of them. In the
 * drain benchmark (docs/delivery-performance.md), 95% of leases were HOT against 76% at 50%, and PostgreSQL's CPU
 * per delivery measured 55–66 µs against 64–72 (three interleaved pairs). New pages hold 11% fewer rows than at
 * 50%.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) await sql`alter table webhook_deliveries set (fillfactor = 45)`.execute(db)
}
