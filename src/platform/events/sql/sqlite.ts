import type { Kysely } from 'kysely'
import type { DB } from '../../storage/schema.js'
import { transaction } from '../../storage/transaction.js'
import type { Outbox } from '../outbox.js'
import type { Guard, GuardedEvent, GuardedEventsSql } from './guarded-events.js'

/** SQLite: the guard and the event in a transaction, which costs no round trip in-process. */
export class SqliteGuardedEvents implements GuardedEventsSql {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly outbox: Outbox,
  ) {}

  recordIf<T extends keyof DB>(guard: Guard<T>, { accountId, type, data }: GuardedEvent, now: number): Promise<boolean> {
    return transaction(this.db, async (tx) => {
      const result = await guard(tx.db).executeTakeFirst()
      if (result.numUpdatedRows !== 1n) return false
      await this.outbox.record(tx, accountId, type, data, now)
      return true
    })
  }
}
