import SQLite from 'better-sqlite3'
import { sql } from 'kysely'
import { describe, expect, inject, it } from 'vitest'
import { type CreatedAccount, type TestHerald, useHerald } from '../support/herald.js'
import { type ApiResponse, basicAuth, call, createAccount, managementToken } from '../support/http.js'

/**
 * A SQLite database that can't take a write (another process holds its lock past the busy timeout, or the disk is
 * full) is unavailable for a moment: Herald answers 503 with Retry-After, in each route family's shape, writes none
 * of the request, and serves again once the database can. PostgreSQL's outages are in test/webhooks/outage.test.ts,
 * with real processes and a real server stopped.
 */

const sqlite = inject('dialects').includes('sqlite')

function expectUnavailableProblem(response: ApiResponse): void {
  expect(response.status).toBe(503)
  expect(response.headers.get('retry-after')).toBe('1')
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/)
  expect(response.body).toMatchObject({ code: 'service_unavailable', status: 503 })
}

function expectUnavailableOAuthError(response: ApiResponse): void {
  expect(response.status).toBe(503)
  expect(response.headers.get('retry-after')).toBe('1')
  expect(response.headers.get('cache-control')).toBe('no-store')
  expect(response.body).toMatchObject({ error: 'temporarily_unavailable' })
}

describe.runIf(sqlite)('a SQLite database that cannot take writes', () => {
  const herald = useHerald('sqlite')

  async function setUp(): Promise<{ h: TestHerald; account: CreatedAccount; token: string; publish: (data?: unknown) => Promise<ApiResponse> }> {
    const h = herald.current
    const account = await createAccount(h)
    const token = await managementToken(account)
    const publish = (data: unknown = {}) => call(`${account.base}/webhooks/events`, 'POST', { token, json: { type: 'order.created', data } })
    expect((await publish()).status).toBe(201)
    return { h, account, token, publish }
  }

  async function eventCount(h: TestHerald, accountId: string): Promise<number> {
    const row = await h.herald.database.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', accountId).executeTakeFirstOrThrow()
    return Number(row.n)
  }

  it('answers 503 while another process holds the write lock, and serves again once it lets go', async () => {
    const { h, account, token, publish } = await setUp()
    const { db } = h.herald.database
    const filename = h.herald.config.database.dialect === 'sqlite' ? h.herald.config.database.filename : ''
    const other = new SQLite(filename)
    // The lock is held past Herald's busy timeout: shortened here (Herald has its one connection) rather than waited for.
    await sql`pragma busy_timeout = 0`.execute(db)
    other.exec('begin immediate')
    try {
      const before = await eventCount(h, account.id)
      expectUnavailableProblem(await publish())
      // An OAuth endpoint that writes: revocation records the token's id.
      const revoke = await call(`${account.base}/oauth/revoke`, 'POST', { headers: { authorization: basicAuth(account.clientId, account.clientSecret) }, form: { token } })
      expectUnavailableOAuthError(revoke)
      // Liveness never needs the database; readiness reads, which a writer's lock doesn't block.
      expect((await call(`${h.origin}/healthz`, 'GET')).status).toBe(200)
      expect((await call(`${h.origin}/readyz`, 'GET')).status).toBe(200)
      expect(await eventCount(h, account.id)).toBe(before)
    } finally {
      other.exec('rollback')
      other.close()
      await sql`pragma busy_timeout = 5000`.execute(db)
    }
    expect((await publish()).status).toBe(201)
  })

  it('answers 503 when the database is full, keeps it whole, and serves again once there is room', async () => {
    const { h, account, publish } = await setUp()
    const { db } = h.herald.database
    const pages = (await sql<{ page_count: number }>`pragma page_count`.execute(db)).rows[0]!.page_count
    const limit = (await sql<{ max_page_count: number }>`pragma max_page_count`.execute(db)).rows[0]!.max_page_count
    // A full disk, as SQLite reports it: the file may not grow past the pages it has.
    await sql.raw(`pragma max_page_count = ${pages}`).execute(db)
    const before = await eventCount(h, account.id)
    try {
      expectUnavailableProblem(await publish({ padding: 'x'.repeat(30_000) }))
    } finally {
      await sql.raw(`pragma max_page_count = ${limit}`).execute(db)
    }
    expect(await eventCount(h, account.id)).toBe(before)
    expect((await sql<{ integrity_check: string }>`pragma integrity_check`.execute(db)).rows).toEqual([{ integrity_check: 'ok' }])
    expect((await publish({ padding: 'x'.repeat(30_000) })).status).toBe(201)
    expect(await eventCount(h, account.id)).toBe(before + 1)
  })
})
