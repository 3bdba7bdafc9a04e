import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { POSTGRES_ADMIN_URL } from '../support/dialects.js'
import { type CreatedAccount, startHerald, type TestHerald } from '../support/herald.js'
import { basicAuth, call, createAccount, managementToken } from '../support/http.js'
import { eventually } from '../support/receiver.js'

/** Runs `text` on the admin connection (another database than the test's, so it never ends itself). */
async function adminRows<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<R[]> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL })
  await client.connect()
  try {
    return (await client.query<R>(text, values)).rows
  } finally {
    await client.end()
  }
}

const postgres = inject('dialects').includes('postgres')

/**
 * The LISTEN connection that carries cache invalidations between processes, on PostgreSQL: when it is cut, it
 * listens again by itself. A change whose notification went unheard meanwhile is read from the change log. The test
 * clock never moves, so no cache entry expires: only the log or a notification can make a change visible.
 */
describe.runIf(postgres)('the cache invalidation listener after its connection is cut', () => {
  let first: TestHerald
  let second: TestHerald
  let account: CreatedAccount
  let database: string

  beforeAll(async () => {
    first = await startHerald('postgres', { worker: false })
    second = await startHerald('postgres', { worker: false, shareWith: first })
    account = await createAccount(first)
    database = new URL(first.herald.config.database.dialect === 'postgres' ? first.herald.config.database.connectionString : '').pathname.slice(1)
  })
  afterAll(async () => {
    await second?.close()
    await first?.close()
  })

  /** The lifetime of an access token `first` issues now; undefined while it answers 503 (a connection just cut). */
  async function issuedLifetime(): Promise<number | undefined> {
    const response = await call<{ expires_in: number }>(`${account.base}/oauth/tokens`, 'POST', {
      headers: { authorization: basicAuth(account.clientId, account.clientSecret) },
      form: { grant_type: 'client_credentials' },
    })
    if (response.status === 503) return undefined
    expect(response.status).toBe(200)
    return response.body.expires_in
  }

  const listeners = async () => (await adminRows<{ pid: number }>("select pid from pg_stat_activity where datname = $1 and query like 'LISTEN %'", [database])).length

  it('listens again by itself, reads what it missed from the change log, and hears notifications again', async () => {
    const initial = await issuedLifetime()
    expect(initial).toBeGreaterThan(60)

    // Every connection of both Heralds to the test's database: their pools and their listeners.
    const terminated = await adminRows('select pid, pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [database])
    expect(terminated.length).toBeGreaterThanOrEqual(2)
    // A change made while the listener was away: its notification is lost, its row in the change log is not.
    // Herald's pool may still hand out a connection whose backend was just terminated, before the pool has seen it
    // fail: a statement on it fails, and the pool drops it, so the change is retried on a fresh one. Repeating it is
    // harmless.
    const { db } = first.herald.database
    const changed = async () => {
      await sql`update account_settings set access_token_ttl = 60 where account_id = ${account.id}`.execute(db)
      await db.insertInto('cache_changes').values({ topic: 'settings', key: account.id, changed_at: first.herald.clock.now() }).execute()
      return true
    }
    await eventually(() => changed().catch(() => false), 5000, 'the change to be written on a live connection')
    await eventually(async () => (await issuedLifetime()) === 60, 5000, 'the change log to be read')

    // Both listen again; a change `second` makes is then heard by `first` at once.
    await eventually(async () => (await listeners()) === 2, 5000, 'both listeners to reconnect')
    const token = await managementToken({ ...account, base: `${second.origin}/accounts/${account.id}` })
    const patched = await call(`${second.origin}/accounts/${account.id}/settings`, 'PATCH', { token, json: { access_token_ttl: 120 } })
    expect(patched.status).toBe(200)
    await eventually(async () => (await issuedLifetime()) === 120, 5000, 'the notification to reach the other Herald')
  })
})
