import { describe, expect, it } from 'vitest'
import { migrateToLatest } from '../../src/platform/storage/migrate.js'
import { migrationsFor } from '../../src/platform/storage/migrations/index.js'
import { openDatabase } from '../../src/platform/storage/database.js'
import { createTestDatabase } from '../support/dialects.js'
import { CACHE_TTL_MS } from '../../src/herald.js'
import { forEachDialect, startHerald, type TestHerald } from '../support/herald.js'
import { basicAuth, call, createAccount, managementToken } from '../support/http.js'

/** A new client of a new account, and a token request with its credentials. */
async function clientRequest(h: TestHerald) {
  const base = await createAccount(h)
  const token = await managementToken(base)
  const created = await call<{ client_id: string; client_secret: string }>(`${base.base}/oauth/clients`, 'POST', {
    token,
    json: { grant_types: ['client_credentials'] },
  })
  const request = () =>
    call(`${base.base}/oauth/tokens`, 'POST', {
      headers: { authorization: basicAuth(created.body.client_id, created.body.client_secret) },
      form: { grant_type: 'client_credentials' },
    })
  // The feed reads this process's own changes too, the client's creation among them: read, they drop nothing later.
  await h.herald.changeFeed.poll()
  return { account: { ...base, created: created.body }, request }
}

forEachDialect((dialect) => {
  describe('several instances on one database', () => {
    it.runIf(dialect === 'postgres')('migrates once when several processes start at once', async () => {
      const database = await createTestDatabase(dialect)
      const instances = Array.from({ length: 4 }, () => openDatabase(database.config))
      try {
        const outcomes = await Promise.all(instances.map((instance) => migrateToLatest(instance)))
        const applied = outcomes.flatMap((outcome) => outcome.applied)
        // Each migration applied by exactly one of them.
        expect(applied.sort()).toEqual(Object.keys(migrationsFor(dialect)).sort())
      } finally {
        await Promise.all(instances.map((instance) => instance.close()))
        await database.drop()
      }
    })

    it.runIf(dialect === 'postgres')("sees another instance's client changes at once through NOTIFY", async () => {
      const first = await startHerald(dialect)
      const second = await startHerald(dialect, { shareWith: first })
      try {
        const account = await createAccount(first)
        const token = await managementToken(account)
        const created = await call<{ client_id: string; client_secret: string }>(`${account.base}/oauth/clients`, 'POST', {
          token,
          json: { grant_types: ['client_credentials'] },
        })
        const secondBase = `${second.origin}/accounts/${account.id}`
        const tokenAt = (base: string, secret: string) =>
          call(`${base}/oauth/tokens`, 'POST', {
            headers: { authorization: basicAuth(created.body.client_id, secret) },
            form: { grant_type: 'client_credentials' },
          })
        // Both instances have the client cached.
        expect((await tokenAt(secondBase, created.body.client_secret)).status).toBe(200)
        expect((await tokenAt(account.base, created.body.client_secret)).status).toBe(200)

        const rotated = await call<{ client_secret: string }>(`${account.base}/oauth/clients/${created.body.client_id}/secret`, 'POST', { token })
        // Neither instance's clock moves: only the notification can have told the second one.
        await expect.poll(async () => (await tokenAt(secondBase, created.body.client_secret)).status, { timeout: 2000 }).toBe(401)
        expect((await tokenAt(secondBase, rotated.body.client_secret)).status).toBe(200)

        await call(`${account.base}/oauth/clients/${created.body.client_id}`, 'DELETE', { token })
        await expect.poll(async () => (await tokenAt(secondBase, rotated.body.client_secret)).status, { timeout: 2000 }).toBe(401)
      } finally {
        await second.close()
        await first.close()
      }
    })

    it("sees a change another process recorded, without a notification, once it reads the change log", async () => {
      const h = await startHerald(dialect)
      try {
        const { account, request } = await clientRequest(h)
        expect((await request()).status).toBe(200)
        // What another process, one no notification from reaches (an operator CLI on the SQLite file), writes.
        const { db } = h.herald.database
        await db.deleteFrom('clients').where('account_id', '=', account.id).where('id', '=', account.created.client_id).execute()
        await h.herald.changeFeed.poll()
        expect((await request()).status).toBe(200)
        await db.insertInto('cache_changes').values({ topic: 'client', key: `${account.id}/${account.created.client_id}`, changed_at: h.clock.now() }).execute()
        await h.herald.changeFeed.poll()
        expect((await request()).status).toBe(401)
      } finally {
        await h.close()
      }
    })

    it('refuses at a second instance a token revoked at the first, once the revocation has reached it', async () => {
      const first = await startHerald(dialect)
      // Behind one public URL, as two processes behind a load balancer: a token of one is a token of the other.
      const second = await startHerald(dialect, { shareWith: first, env: { PUBLIC_URL: first.origin } })
      try {
        const account = await createAccount(first)
        const created = await call<{ client_id: string; client_secret: string }>(`${account.base}/oauth/clients`, 'POST', {
          token: await managementToken(account),
          json: { grant_types: ['client_credentials'] },
        })
        const authorization = basicAuth(created.body.client_id, created.body.client_secret)
        const issued = await call<{ access_token: string }>(`${account.base}/oauth/tokens`, 'POST', { headers: { authorization }, form: { grant_type: 'client_credentials' } })
        const introspect = async (base: string) =>
          (await call<{ active: boolean }>(`${base}/oauth/introspect`, 'POST', { headers: { authorization }, form: { token: issued.body.access_token } })).body.active
        const secondBase = `${second.origin}/accounts/${account.id}`
        // Both instances hold the account's revocations in memory now.
        expect(await introspect(account.base)).toBe(true)
        expect(await introspect(secondBase)).toBe(true)

        const revoked = await call(`${account.base}/oauth/revoke`, 'POST', { headers: { authorization }, form: { token: issued.body.access_token } })
        expect(revoked.status).toBe(200)
        expect(await introspect(account.base), 'at once where it was revoked').toBe(false)
        // On SQLite only the change log tells the second instance; on PostgreSQL a notification may have already.
        await second.herald.changeFeed.poll()
        expect(await introspect(secondBase)).toBe(false)
      } finally {
        await second.close()
        await first.close()
      }
    })

    it('drops a cached client after the time-to-live when the change was written into the database by hand', async () => {
      const h = await startHerald(dialect)
      try {
        const { account, request } = await clientRequest(h)
        expect((await request()).status).toBe(200)
        await h.herald.database.db.deleteFrom('clients').where('id', '=', account.created.client_id).execute()
        await h.herald.changeFeed.poll()
        expect((await request()).status).toBe(200)
        h.clock.advance(CACHE_TTL_MS)
        expect((await request()).status).toBe(401)
      } finally {
        await h.close()
      }
    })
  })
})
