import type { Kysely, RawBuilder, SelectQueryBuilder } from 'kysely'
import type { DeleteBatch } from '../delete-batch.js'
import type { JsonCell, JsonColumnType } from '../json-rows.js'
import type { DB } from '../schema.js'

export type DialectName = 'sqlite' | 'postgres'

export interface RowLockOptions {
  /** Leave rows another transaction has locked to a later batch rather than wait for them. */
  skipLocked?: boolean
}

/**
 * The SQL pieces every aggregate needs that differ between the dialects, one implementation each (./postgres.ts,
 * ./sqlite.ts), chosen once by openDatabase. Callers use them without asking which database they are on.
 *
 * Row locks: on PostgreSQL several processes claim rows without blocking each other (`FOR UPDATE SKIP LOCKED`), and a
 * transaction that decides from a row locks it (`FOR KEY SHARE`, `FOR NO KEY UPDATE`), so that a change to the row
 * waits until the decision has committed. SQLite has none: it runs one transaction at a time, so nothing can change
 * in between, and its lock methods answer the query unchanged.
 */
export interface SqlDialect {
  /**
   * Which database this is: read only where one implementation of an aggregate's SQL is chosen (the storage layer,
   * the `sql/` folders); eslint.config.js keeps it so.
   */
  readonly name: DialectName
  /**
   * Batched transactions of one kind worth running at once (see Batcher). SQLite has one connection. On PostgreSQL
   * two: one batch is written while the other commits; more would only split the same requests into smaller
   * batches, each paying its own round trips (`npm run bench -- deliveries`).
   */
  readonly concurrentTransactions: number
  forUpdate<D, T extends keyof D, O>(query: SelectQueryBuilder<D, T, O>, options?: RowLockOptions): SelectQueryBuilder<D, T, O>
  forNoKeyUpdate<D, T extends keyof D, O>(query: SelectQueryBuilder<D, T, O>): SelectQueryBuilder<D, T, O>
  forKeyShare<D, T extends keyof D, O>(query: SelectQueryBuilder<D, T, O>): SelectQueryBuilder<D, T, O>
  /**
   * Locks the rows `query` reads FOR UPDATE until the transaction ends, for a transaction that must hold them before
   * it reads or changes anything else; on SQLite there is nothing to take, and no statement is sent.
   */
  lockForUpdate<D, T extends keyof D, O>(query: SelectQueryBuilder<D, T, O>): Promise<void>
  /**
   * The rows of `endpoints`, as a derived table of `account_id`, `id` and `status`, locked FOR KEY SHARE in the
   * order of their ids, as a transaction that locks several endpoints always does; on SQLite the table itself, which
   * the caller's join narrows.
   */
  endpointsForKeyShare(endpoints: readonly EndpointKey[]): RawBuilder<unknown>
  /** `rows` as a derived table with `columns`, bound as one JSON parameter (see json-rows.ts). */
  jsonRows<C extends string>(columns: Readonly<Record<C, JsonColumnType>>, rows: ReadonlyArray<Readonly<Record<C, JsonCell>>>): RawBuilder<unknown>
  /** Deletes one bounded batch of `table`'s rows; answers how many went (see delete-batch.ts). */
  deleteBatch(db: Kysely<DB>, table: keyof DB & string, batch: DeleteBatch): Promise<number>
}

/** An endpoint's key, as its tenant-scoped foreign keys name it. */
export interface EndpointKey {
  account_id: string
  id: string
}
