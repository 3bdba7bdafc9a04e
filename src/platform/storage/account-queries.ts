import { type DeleteQueryBuilder, type DeleteResult, type Insertable, type InsertQueryBuilder, type InsertResult, type Kysely, type SelectQueryBuilder, type SqlBool, sql, type UpdateQueryBuilder, type UpdateResult } from 'kysely'
import type { DB } from './schema.js'

/** The tables whose every row belongs to one account: its `account_id`. */
type TenantTable = { [T in keyof DB]: DB[T] extends { account_id: string } ? T : never }[keyof DB]

/** A query's selection before `select`, as Kysely's `selectFrom` types it. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- Kysely's own type for "nothing selected yet"
type NothingSelected = {}

type TenantRow<T extends TenantTable> = Omit<Insertable<DB[T]>, 'account_id'>

/**
 * The one way in to an account's rows: every statement built here names the account (`account_id` in its WHERE, or
 * in the row it inserts), so a request can reach only its own account's data. Kysely joins the caller's conditions to
 * the account's with AND and brackets what its expression builder makes (`eb.or`), but not raw SQL: a raw condition
 * with OR must bracket itself. `clearWhere` is refused by the linter. Work that spans accounts by design (the delivery
 * worker's claim, retention, pruning) uses the database directly, in modules whose comments say so.
 */
export class AccountQueries {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly accountId: string,
  ) {}

  selectFrom<T extends TenantTable>(table: T): SelectQueryBuilder<DB, T, NothingSelected> {
    const rows = this.db.selectFrom(table as TenantTable).where(this.#owned(table))
    return rows as unknown as SelectQueryBuilder<DB, T, NothingSelected>
  }

  /**
   * The account's rows of `table` in the order of its index led by the account, for lists: see `inAccountOrder`.
   */
  listFrom<T extends TenantTable>(table: T, direction: 'asc' | 'desc', key: 'id' | 'name' = 'id'): SelectQueryBuilder<DB, T, NothingSelected> {
    const rows = this.db.selectFrom(table as TenantTable) as unknown as SelectQueryBuilder<DB, T, NothingSelected>
    return inAccountOrder(rows, this.accountId, direction, key)
  }

  updateTable<T extends TenantTable>(table: T): UpdateQueryBuilder<DB, T, T, UpdateResult> {
    const update = this.db.updateTable(table as TenantTable).where(this.#owned(table))
    return update as unknown as UpdateQueryBuilder<DB, T, T, UpdateResult>
  }

  deleteFrom<T extends TenantTable>(table: T): DeleteQueryBuilder<DB, T, DeleteResult> {
    const deletion = this.db.deleteFrom(table as TenantTable).where(this.#owned(table))
    return deletion as unknown as DeleteQueryBuilder<DB, T, DeleteResult>
  }

  /** Inserts `rows` as the account's: their `account_id` is the handle's, never the caller's. */
  insertInto<T extends TenantTable>(table: T, rows: TenantRow<T> | ReadonlyArray<TenantRow<T>>): InsertQueryBuilder<DB, T, InsertResult> {
    const owned = (Array.isArray(rows) ? rows : [rows]).map((row: TenantRow<T>) => ({ ...row, account_id: this.accountId }))
    return this.db.insertInto(table).values(owned as unknown as ReadonlyArray<Insertable<DB[T]>>)
  }

  #owned(table: string) {
    return sql<SqlBool>`${sql.ref(`${table}.account_id`)} = ${this.accountId}`
  }
}

/** The account's handle on `db`, which may be a transaction's. */
export function forAccount(db: Kysely<DB>, accountId: string): AccountQueries {
  return new AccountQueries(db, accountId)
}

/**
 * `query` kept to one account's rows, in the order of the account's index: `account_id`, then `key`. Every list walks
 * an index led by the account, whatever the other accounts hold. The account is compared with a list of itself
 * rather than with `=`: PostgreSQL leaves a column equal to a constant out of the order it has to produce, and the
 * bare key's order is also that of the primary key (ids alone), which it may then walk, reading and discarding every
 * row of other accounts that lies between the account's, when it guesses that the account's rows are spread evenly.
 * A column compared with a list stays in the order, and only an index led by the account gives that order without
 * reading all of the account's rows.
 */
function inAccountOrder<T extends TenantTable>(query: SelectQueryBuilder<DB, T, NothingSelected>, accountId: string, direction: 'asc' | 'desc', key: 'id' | 'name'): SelectQueryBuilder<DB, T, NothingSelected> {
  return query.where(sql<SqlBool>`account_id in (${accountId}, ${accountId})`).orderBy(sql.ref('account_id'), direction).orderBy(sql.ref(key), direction)
}
