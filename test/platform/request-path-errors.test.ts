import pg from 'pg'
import { describe, expect, inject, it } from 'vitest'
import { isDatabaseUnavailable } from '../../src/platform/storage/unavailable.js'
import { createTestDatabase } from '../support/dialects.js'
import { OPERATOR_TOKEN, forEachDialect, useHerald } from '../support/herald.js'
import { call, createAccount } from '../support/http.js'

/** Errors a request can meet in the database that are no bug of the request's: never a 500. */
forEachDialect((dialect) => {
  const h = useHerald(dialect)

  it('answers 404 to a console link of an account deleted since its route last looked it up', async () => {
    const account = await createAccount(h.current)
    const made = await call<{ url: string }>(`${h.current.origin}/accounts/${account.id}/console-links`, 'POST', { token: OPERATOR_TOKEN, json: {} })
    expect(made.status, made.text).toBe(201)
    const code = new URLSearchParams(new URL(made.body.url).hash.slice(1)).get('link')
    // The account's routes now know it: the next request under its base finds it without reading the database.
    expect((await call(`${account.base}/.well-known/openid-configuration`, 'GET')).status).toBe(200)
    await h.current.herald.database.db.deleteFrom('accounts').where('id', '=', account.id).execute()

    const exchanged = await call(`${account.base}/console-links/exchange`, 'POST', { json: { code } })
    expect(exchanged.status, exchanged.text).toBe(404)
    expect(exchanged.body).toMatchObject({ code: 'not_found' })
  })
})

/**
 * PostgreSQL aborts a transaction for a concurrent one's sake, and the same request made again succeeds: such an
 * error, forced here for real, is one that answers 503 with Retry-After (see error-handler.ts), not a 500.
 */
describe.runIf(inject('dialects').includes('postgres'))('transactions PostgreSQL aborts for a concurrent one', () => {
  async function withTwoSessions(test: (a: pg.Client, b: pg.Client) => Promise<void>): Promise<void> {
    const database = await createTestDatabase('postgres')
    const connectionString = database.config.dialect === 'postgres' ? database.config.connectionString : ''
    const [a, b] = [new pg.Client({ connectionString }), new pg.Client({ connectionString })]
    try {
      await Promise.all([a.connect(), b.connect()])
      await a.query('create table counters (id int primary key, n int not null)')
      await a.query('insert into counters values (1, 0), (2, 0)')
      await test(a, b)
    } finally {
      await Promise.all([a.end(), b.end()])
      await database.drop()
    }
  }

  it('counts a serialization failure (40001) as a passing unavailability', async () => {
    await withTwoSessions(async (a, b) => {
      await a.query('begin isolation level repeatable read')
      await a.query('select n from counters where id = 1')
      await b.query('update counters set n = n + 1 where id = 1')
      const error: unknown = await a.query('update counters set n = n + 1 where id = 1').then(() => undefined, (reason: unknown) => reason)
      await a.query('rollback')
      expect(error).toMatchObject({ code: '40001' })
      expect(isDatabaseUnavailable(error)).toBe(true)
    })
  })

  it('counts a deadlock (40P01) as a passing unavailability', async () => {
    await withTwoSessions(async (a, b) => {
      for (const session of [a, b]) await session.query("set deadlock_timeout = '10ms'")
      await a.query('begin')
      await b.query('begin')
      await a.query('update counters set n = 1 where id = 1')
      await b.query('update counters set n = 1 where id = 2')
      // Each now waits for the row the other holds; PostgreSQL aborts one of them.
      const outcomes = await Promise.allSettled([a.query('update counters set n = 2 where id = 2'), b.query('update counters set n = 2 where id = 1')])
      await Promise.all([a.query('rollback'), b.query('rollback')])
      const errors = outcomes.filter((outcome) => outcome.status === 'rejected').map((outcome) => outcome.reason as unknown)
      expect(errors).toHaveLength(1)
      expect(errors[0]).toMatchObject({ code: '40P01' })
      expect(isDatabaseUnavailable(errors[0])).toBe(true)
    })
  })
})
