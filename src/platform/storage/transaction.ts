import type { Kysely, Transaction } from 'kysely'
import type { DB } from './schema.js'

/** A write in progress: the transaction, and work that must wait until it has committed. */
export interface Tx {
  readonly db: Transaction<DB>
  /** Runs after a successful commit, never after a rollback (in-process cache invalidation). */
  afterCommit(hook: () => void): void
}

/** One transaction per request that writes: everything `work` does commits together or not at all. */
export async function transaction<T>(db: Kysely<DB>, work: (tx: Tx) => Promise<T>): Promise<T> {
  const hooks: Array<() => void> = []
  const trx = await db.startTransaction().execute()
  let result: T
  try {
    result = await work({ db: trx, afterCommit: (hook) => hooks.push(hook) })
    await trx.commit().execute()
  } catch (error) {
    // The caller needs the cause, not the rollback's own failure: SQLite has already rolled back after SQLITE_FULL
    // (so ROLLBACK says "no transaction is active"), and a broken connection can't roll back at all (its
    // transaction ends with it). Either way nothing of `work` remains.
    await trx.rollback().execute().catch(() => {})
    throw error
  }
  for (const hook of hooks) hook()
  return result
}

/** Times a transaction chosen to break a deadlock is run again before its error stands. */
const DEADLOCK_RETRIES = 3

/**
 * Runs `write` (a whole transaction) again when PostgreSQL aborted it to break a deadlock: the other transaction then
 * went on, and the new run reads afresh what it left. For transactions whose every effect is in the database, and
 * where the order of two rows' locks can't be made the same on every path (see Endpoints.delete).
 */
export async function retryingDeadlocks<T>(write: () => Promise<T>): Promise<T> {
  for (let retry = 0; ; retry++) {
    try {
      return await write()
    } catch (error) {
      if (retry === DEADLOCK_RETRIES || !isDeadlock(error)) throw error
    }
  }
}

/** PostgreSQL's `deadlock_detected` (SQLSTATE 40P01); SQLite runs one transaction at a time and never deadlocks. */
function isDeadlock(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === '40P01'
}
