import { type RawBuilder, sql } from 'kysely'

/** A search of one table, account by account; `r` is the table's row, `s` the account's settings row. */
export interface AccountSearch {
  table: 'webhook_deliveries' | 'events'
  columns: RawBuilder<unknown>
  condition: RawBuilder<unknown>
  /** An index that starts with the account continues with these columns. */
  order: RawBuilder<unknown>
  limit: number
  /** Joined to the settings row, for `condition` to use. */
  join?: RawBuilder<unknown>
}

/**
 * Up to `limit` rows of a table past retention, found account by account: each account's rows are read from its
 * oldest on an index by account and time, up to the edge of its retention, so a run reads the rows it deletes and
 * few others, however many rows are still kept. One implementation per dialect, chosen in ./index.ts.
 */
export interface RetentionSearch {
  pastRetention<Row>(search: AccountSearch): RawBuilder<Row>
}

/** The accounts' settings rows, with the search's join. */
export function accountsOf(search: AccountSearch): RawBuilder<unknown> {
  return sql`account_settings as s ${search.join ?? sql``}`
}

/** The searched table's rows of the account `s`. */
export function rowsOf(search: AccountSearch): RawBuilder<unknown> {
  return sql`${sql.table(search.table)} as r where r.account_id = s.account_id and ${search.condition}`
}
