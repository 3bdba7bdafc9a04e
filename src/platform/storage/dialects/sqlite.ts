import { type Kysely, sql } from 'kysely'
import { type DeleteBatch, deletePicked, pickBatch } from '../delete-batch.js'
import { type JsonCell, type JsonColumnType, quotedColumn } from '../json-rows.js'
import type { DB } from '../schema.js'
import type { SqlDialect } from './sql-dialect.js'

/**
 * SQLite runs one transaction at a time, across processes too (each begins IMMEDIATE, see sqlite-driver.ts): nothing
 * changes between a read and a write, so there is nothing to lock.
 */
export const sqliteDialect: SqlDialect = {
  name: 'sqlite',
  concurrentTransactions: 1,
  forUpdate: (query) => query,
  forNoKeyUpdate: (query) => query,
  forKeyShare: (query) => query,
  lockForUpdate: async () => {},
  endpointsForKeyShare: () => sql`webhook_endpoints`,

  jsonRows<C extends string>(columns: Readonly<Record<C, JsonColumnType>>, rows: ReadonlyArray<Readonly<Record<C, JsonCell>>>) {
    // Each row as an array, its cells in column order: SQLite reads an array element by position, where an object's
    // member is found by comparing keys, which made a 256-row completion about 1.5 times as slow.
    // `->>` yields SQLite's own types: a whole number INTEGER, a string TEXT, null NULL.
    const names = Object.keys(columns) as C[]
    const json = JSON.stringify(rows.map((row) => names.map((name) => row[name])))
    const selections = names.map((name, index) => sql.raw(`value ->> ${index} as ${quotedColumn(name)}`))
    return sql`(select ${sql.join(selections)} from json_each(${json}))`
  },

  deleteBatch(db: Kysely<DB>, table: keyof DB & string, batch: DeleteBatch) {
    return deletePicked(db, table, sql`rowid in (${pickBatch('rowid', table, batch)})`, batch)
  },
}
