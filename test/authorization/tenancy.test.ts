import { beforeAll, describe, expect, it } from 'vitest'
import { type CreatedAccount, forEachDialect, useHerald } from '../support/herald.js'
import { basicAuth, call, createAccount, managementToken } from '../support/http.js'

forEachDialect((dialect) => {
  const h = useHerald(dialect)
  let a: CreatedAccount
  let b: CreatedAccount
  let tokenA: string
  let tokenB: string
  let clientOfA: { client_id: string; client_secret: string }

  beforeAll(async () => {
    a = await createAccount(h.current, 'account-a')
    b = await createAccount(h.current, 'account-b')
    tokenA = await managementToken(a)
    tokenB = await managementToken(b)
    await call(`${a.base}/oauth/scopes`, 'POST', { token: tokenA, json: { name: 'a:private', description: 'only in A' } })
    const created = await call<{ client_id: string; client_secret: string }>(`${a.base}/oauth/clients`, 'POST', {
      token: tokenA,
      json: { client_name: 'a-client', grant_types: ['client_credentials'], scope: 'a:private' },
    })
    clientOfA = created.body
  })

  describe("one account can't reach another's clients, scopes or settings", () => {
    it("answers 404 for A's client under B's base, for every operation, and changes nothing", async () => {
      const path = `${b.base}/oauth/clients/${clientOfA.client_id}`
      expect((await call(path, 'GET', { token: tokenB })).status).toBe(404)
      expect((await call(path, 'PATCH', { token: tokenB, json: { client_name: 'stolen' } })).status).toBe(404)
      expect((await call(`${path}/secret`, 'POST', { token: tokenB })).status).toBe(404)
      expect((await call(path, 'DELETE', { token: tokenB })).status).toBe(404)

      const stillThere = await call<{ client_name: string }>(`${a.base}/oauth/clients/${clientOfA.client_id}`, 'GET', { token: tokenA })
      expect(stillThere.status).toBe(200)
      expect(stillThere.body.client_name).toBe('a-client')
    })

    it("never lists A's clients or scopes at B", async () => {
      const clients = await call<{ data: Array<{ client_id: string }> }>(`${b.base}/oauth/clients?limit=200`, 'GET', { token: tokenB })
      expect(clients.body.data.map((client) => client.client_id)).not.toContain(clientOfA.client_id)
      expect(clients.body.data.map((client) => client.client_id)).toEqual([b.clientId])
      const scopes = await call<{ data: Array<{ name: string }> }>(`${b.base}/oauth/scopes?limit=200`, 'GET', { token: tokenB })
      expect(scopes.body.data.map((scope) => scope.name)).not.toContain('a:private')
    })

    it("treats A's scope as unknown at B: not readable, not deletable, not grantable", async () => {
      expect((await call(`${b.base}/oauth/scopes/a:private`, 'GET', { token: tokenB })).status).toBe(404)
      expect((await call(`${b.base}/oauth/scopes/a:private`, 'DELETE', { token: tokenB })).status).toBe(404)
      const refused = await call<{ errors: Array<{ pointer: string }> }>(`${b.base}/oauth/clients`, 'POST', {
        token: tokenB,
        json: { grant_types: ['client_credentials'], scope: 'a:private' },
      })
      expect(refused.status).toBe(400)
      expect(refused.body.errors.map((error) => error.pointer)).toContain('/body/scope')
      expect((await call(`${a.base}/oauth/scopes/a:private`, 'GET', { token: tokenA })).status).toBe(200)
    })

    it("keeps settings apart: B's change does not touch A's tokens", async () => {
      expect((await call(`${b.base}/settings`, 'PATCH', { token: tokenB, json: { access_token_ttl: 120 } })).status).toBe(200)
      const settingsA = await call<{ access_token_ttl: number }>(`${a.base}/settings`, 'GET', { token: tokenA })
      expect(settingsA.body.access_token_ttl).toBe(3600)
      const issued = await call<{ expires_in: number }>(`${a.base}/oauth/tokens`, 'POST', {
        headers: { authorization: basicAuth(clientOfA.client_id, clientOfA.client_secret) },
        form: { grant_type: 'client_credentials' },
      })
      expect(issued.body.expires_in).toBe(3600)
    })

    it("refuses A's client at B's token endpoint, and B sees A's tokens as inactive", async () => {
      const auth = basicAuth(clientOfA.client_id, clientOfA.client_secret)
      const atB = await call(`${b.base}/oauth/tokens`, 'POST', { headers: { authorization: auth }, form: { grant_type: 'client_credentials' } })
      expect(atB.status).toBe(401)
      expect(atB.body).toMatchObject({ error: 'invalid_client' })

      const issued = await call<{ access_token: string }>(`${a.base}/oauth/tokens`, 'POST', { headers: { authorization: auth }, form: { grant_type: 'client_credentials' } })
      const atA = await call(`${a.base}/oauth/introspect`, 'POST', { headers: { authorization: auth }, form: { token: issued.body.access_token } })
      expect(atA.body).toMatchObject({ active: true })
      const introspectAtB = await call(`${b.base}/oauth/introspect`, 'POST', {
        headers: { authorization: basicAuth(b.clientId, b.clientSecret) },
        form: { token: issued.body.access_token },
      })
      expect(introspectAtB.status).toBe(200)
      expect(introspectAtB.body).toEqual({ active: false })
    })
  })
})
