import type { Kysely, UpdateQueryBuilder, UpdateResult } from 'kysely'
import type { DB } from '../../storage/schema.js'

/** A compare-and-set UPDATE, built on the handle it is given (a transaction's, on SQLite). */
export type Guard<T extends keyof DB> = (db: Kysely<DB>) => UpdateQueryBuilder<DB, T, T, UpdateResult>

/** An event to record, as Outbox.record takes it. */
export interface GuardedEvent {
  accountId: string
  type: string
  data: object
}

/** How the database's dialect writes a change and the event announcing it, both or neither. */
export interface GuardedEventsSql {
  /** Runs `guard`, and records `event` only if the guard changed a row; whether it did. Durable once it returns. */
  recordIf<T extends keyof DB>(guard: Guard<T>, event: GuardedEvent, now: number): Promise<boolean>
}
