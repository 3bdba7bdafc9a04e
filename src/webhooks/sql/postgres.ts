import { type RawBuilder, sql } from 'kysely'
import { type AccountSearch, accountsOf, type RetentionSearch, rowsOf } from './retention-search.js'

/**
 * The order is spelled out in a lateral subquery per account, so that the planner can walk the index and stop at the
 * limit (with some statistics it sorts the account's rows past retention instead, which still reads nothing within
 * retention).
 */
export const postgresRetentionSearch: RetentionSearch = {
  pastRetention<Row>(search: AccountSearch): RawBuilder<Row> {
    return sql<Row>`select p.* from ${accountsOf(search)} cross join lateral (select ${search.columns} from ${rowsOf(search)} order by ${search.order} limit ${search.limit}) as p limit ${search.limit}`
  },
}
