import type { Kysely } from 'kysely'
import { forAccount } from '../../../platform/storage/account-queries.js'
import type { DB } from '../../../platform/storage/schema.js'
import { transaction } from '../../../platform/storage/transaction.js'
import type { NewRefreshTokenRow, RotationSql, Spending } from './rotation-sql.js'

/** SQLite: a transaction of the spending and the insert, which costs no round trip in-process. */
export class SqliteRotationSql implements RotationSql {
  constructor(private readonly db: Kysely<DB>) {}

  async rotate(accountId: string, spending: Spending, successor: NewRefreshTokenRow): Promise<boolean> {
    return transaction(this.db, async (tx) => {
      if (!(await spend(tx.db, accountId, spending))) return false
      await forAccount(tx.db, accountId).insertInto('refresh_tokens', { ...successor, spent_at: null, successor: null }).execute()
      return true
    })
  }
}

/** The compare-and-set that spends a token: only an unspent one. */
export async function spend(db: Kysely<DB>, accountId: string, { id, at, sealedSuccessor }: Spending): Promise<boolean> {
  const result = await forAccount(db, accountId)
    .updateTable('refresh_tokens')
    .set({ spent_at: at, successor: sealedSuccessor })
    .where('id', '=', id)
    .where('spent_at', 'is', null)
    .executeTakeFirst()
  return result.numUpdatedRows === 1n
}
