import { type RawBuilder, sql } from 'kysely'
import { type AccountSearch, accountsOf, type RetentionSearch, rowsOf } from './retention-search.js'

/** SQLite has no LATERAL; it runs a CROSS JOIN with its left table outermost and walks the index in order by itself. */
export const sqliteRetentionSearch: RetentionSearch = {
  pastRetention<Row>(search: AccountSearch): RawBuilder<Row> {
    return sql<Row>`select ${search.columns} from ${accountsOf(search)} cross join ${rowsOf(search)} limit ${search.limit}`
  },
}
