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
  const result = await db.transaction().execute((trx) => work({ db: trx, afterCommit: (hook) => hooks.push(hook) }))
  for (const hook of hooks) hook()
  return result
}
