import pg from 'pg'
import type { TestHerald } from './herald.js'
import { eventually } from './receiver.js'

/** Resolves once `count` requests wait behind the held row (or connection). */
export type Waiters = (count: number) => Promise<void>

/**
 * Runs `start` while the authorization flow's row (a sign-in, or the grant it became) can't be written, then lets it
 * go: what `start` fires queues behind, and `waiters(n)` resolves once n requests wait. On PostgreSQL a connection of
 * the test's own locks the row, and the waiting sessions are counted in pg_stat_activity; the requests wait in the
 * order they reached the row. On SQLite, where Herald's one connection serves every statement in turn, the test
 * holds that connection in a transaction, so every request's read waits and all of them run before any request's
 * write; the waiting requests are those Herald has logged as arriving.
 */
export async function whileFlowLocked<T>(h: TestHerald, accountId: string, flowId: string, start: (waiters: Waiters) => Promise<T>): Promise<T> {
  return whileRowLocked(h, 'select 1 from authorization_flows where account_id = $1 and id = $2 for update', [accountId, flowId], start)
}

/** As whileFlowLocked, for the rows `lock` (a `select … for update` on PostgreSQL) locks. */
export async function whileRowLocked<T>(h: TestHerald, lock: string, parameters: unknown[], start: (waiters: Waiters) => Promise<T>): Promise<T> {
  const config = h.database.config
  if (config.dialect !== 'postgres') return whileConnectionHeld(h, start)
  const holder = new pg.Client({ connectionString: config.connectionString })
  await holder.connect()
  try {
    await holder.query('begin')
    await holder.query(lock, parameters)
    return await start((count) => lockWaiters(holder, count))
  } finally {
    await holder.query('commit').catch(() => undefined)
    await holder.end()
  }
}

async function whileConnectionHeld<T>(h: TestHerald, start: (waiters: Waiters) => Promise<T>): Promise<T> {
  let release = () => {}
  const released = new Promise<void>((resolve) => (release = resolve))
  let signalHeld = () => {}
  const held = new Promise<void>((resolve) => (signalHeld = resolve))
  const holding = h.herald.database.db.transaction().execute(async () => {
    signalHeld()
    await released
  })
  await held
  const logged = h.logs.length
  try {
    return await start(async (count) => {
      await eventually(() => h.logs.slice(logged).filter((line) => line.includes('"msg":"incoming request"')).length >= count, 10_000, `${count} requests to arrive`)
    })
  } finally {
    release()
    await holding
  }
}

/** Resolves once `count` other sessions of the database wait for a lock; fails if they don't within 10 s. */
async function lockWaiters(observer: pg.Client, count: number): Promise<void> {
  await eventually(async () => {
    // pg_stat_activity is read once per transaction, and the observer's is the holder's: take a fresh snapshot.
    await observer.query('select pg_stat_clear_snapshot()')
    const { rows } = await observer.query<{ n: number }>("select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'")
    return rows[0]!.n >= count
  }, 10_000, `${count} sessions to wait for a lock at once`)
}
