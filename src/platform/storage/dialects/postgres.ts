import { type Kysely, type SelectQueryBuilder, sql } from 'kysely'
import { type DeleteBatch, deletePicked, pickBatch } from '../delete-batch.js'
import { type JsonCell, type JsonColumnType, quotedColumn } from '../json-rows.js'
import type { DB } from '../schema.js'
import type { EndpointKey, RowLockOptions, SqlDialect } from './sql-dialect.js'

export const postgresDialect: SqlDialect = {
  name: 'postgres',
  concurrentTransactions: 2,

  forUpdate<D, T extends keyof D, O>(query: SelectQueryBuilder<D, T, O>, options: RowLockOptions = {}) {
    const locked = query.forUpdate()
    return options.skipLocked ? locked.skipLocked() : locked
  },

  forNoKeyUpdate: (query) => query.forNoKeyUpdate(),

  forKeyShare: (query) => query.forKeyShare(),

  async lockForUpdate(query) {
    await query.forUpdate().execute()
  },

  /** In the order of their ids: a worker disabling two of them (FOR UPDATE) and the caller never hold one each while waiting for the other. */
  endpointsForKeyShare(endpoints: readonly EndpointKey[]) {
    const unique = new Map(endpoints.map((endpoint) => [`${endpoint.account_id}\n${endpoint.id}`, endpoint]))
    const rows = postgresDialect.jsonRows({ account_id: 'text', id: 'text' }, [...unique.values()])
    return sql`(select account_id, id, status from webhook_endpoints where (account_id, id) in (select account_id, id from ${rows} as i) order by id for key share)`
  },

  jsonRows<C extends string>(columns: Readonly<Record<C, JsonColumnType>>, rows: ReadonlyArray<Readonly<Record<C, JsonCell>>>) {
    // `json`, not `jsonb`: the text is read once, row by row, where `jsonb` first builds the whole document in its
    // binary form, which a batch of completions pays on the drain's hot path.
    const names = Object.keys(columns) as C[]
    const definitions = names.map((name) => sql.raw(`${quotedColumn(name)} ${columns[name]}`))
    return sql`(select * from json_to_recordset(cast(${JSON.stringify(rows)} as json)) as r(${sql.join(definitions)}))`
  },

  deleteBatch(db: Kysely<DB>, table: keyof DB & string, batch: DeleteBatch) {
    const picked = pickBatch('ctid', table, batch, batch.skipLocked ? sql`for update skip locked` : sql``)
    // PostgreSQL fetches a list of ctids with a TID scan only when it comes as an array.
    return deletePicked(db, table, sql`ctid = any(array(${picked}))`, batch)
  },
}
