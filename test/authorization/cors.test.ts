import { beforeAll, describe, expect, it } from 'vitest'
import { CACHE_TTL_MS } from '../../src/herald.js'
import { type CreatedAccount, forEachDialect, useHerald } from '../support/herald.js'
import { type ApiResponse, basicAuth, call, createAccount, managementToken } from '../support/http.js'

interface RegisteredClient {
  client_id: string
  client_secret: string
}

const APP = 'https://app.example'
const OTHER_APP = 'https://other-tenant.example'
const EVIL = 'https://evil.example'

const CORS_HEADERS = [
  'access-control-allow-origin',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-allow-credentials',
  'access-control-max-age',
  'access-control-expose-headers',
]

function expectNoCors(response: ApiResponse, where: string): void {
  for (const header of CORS_HEADERS) expect(response.headers.get(header), `${where}: ${header}`).toBeNull()
}

function expectAllowed(response: ApiResponse, origin: string, where: string): void {
  expect(response.headers.get('access-control-allow-origin'), where).toBe(origin)
  expect(response.headers.get('vary') ?? '', where).toMatch(/(^|,\s*)Origin(\s*,|$)/i)
}

forEachDialect((dialect) => {
  const h = useHerald(dialect)
  let account: CreatedAccount
  let other: CreatedAccount
  let adminToken: string
  let spa: RegisteredClient

  const manage = <T = Record<string, unknown>>(target: CreatedAccount, token: string, method: string, path: string, json?: unknown) =>
    call<T>(`${target.base}${path}`, method, { token, ...(json !== undefined && { json }) })

  const tokenRequest = (client: RegisteredClient, origin: string | undefined, secret = client.client_secret) =>
    call<{ access_token: string }>(`${account.base}/oauth/tokens`, 'POST', {
      headers: { authorization: basicAuth(client.client_id, secret), ...(origin !== undefined && { origin }) },
      form: { grant_type: 'client_credentials' },
    })

  const preflight = (url: string, origin: string) =>
    call(url, 'OPTIONS', { headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } })

  beforeAll(async () => {
    account = await createAccount(h.current, 'cors')
    other = await createAccount(h.current, 'cors-other')
    adminToken = await managementToken(account)
    const created = await manage<RegisteredClient>(account, adminToken, 'POST', '/oauth/clients', {
      grant_types: ['client_credentials'],
      allowed_cors_origins: [APP],
    })
    expect(created.status, created.text).toBe(201)
    spa = created.body
    const otherCreated = await manage(other, await managementToken(other), 'POST', '/oauth/clients', {
      grant_types: ['client_credentials'],
      allowed_cors_origins: [OTHER_APP],
    })
    expect(otherCreated.status).toBe(201)
  })

  describe('token and revocation endpoints', () => {
    it("allow an origin one of the account's clients registered, on success and on error", async () => {
      const issued = await tokenRequest(spa, APP)
      expect(issued.status).toBe(200)
      expectAllowed(issued, APP, 'token 200')

      // The admin client registered no origin: the account's set is what counts, not the caller's.
      const byAdmin = await tokenRequest({ client_id: account.clientId, client_secret: account.clientSecret }, APP)
      expect(byAdmin.status).toBe(200)
      expectAllowed(byAdmin, APP, 'token 200 for another client')

      const failed = await tokenRequest(spa, APP, 'wrong-secret')
      expect(failed.status).toBe(401)
      expectAllowed(failed, APP, 'token 401')

      const revoked = await call(`${account.base}/oauth/revoke`, 'POST', {
        headers: { authorization: basicAuth(spa.client_id, spa.client_secret), origin: APP },
        form: { token: issued.body.access_token },
      })
      expect(revoked.status).toBe(200)
      expectAllowed(revoked, APP, 'revoke 200')
      const garbage = await call(`${account.base}/oauth/revoke`, 'POST', { headers: { origin: APP }, json: { token: 'x' } })
      expect(garbage.status).toBe(400)
      expectAllowed(garbage, APP, 'revoke 400')
    })

    it("send no CORS headers to an unknown origin, nor to another account's client's origin", async () => {
      for (const origin of [EVIL, OTHER_APP, 'null', `${APP}:8443`, APP.toUpperCase()]) {
        const issued = await tokenRequest(spa, origin)
        expect(issued.status).toBe(200)
        expectNoCors(issued, `token from ${origin}`)
      }
      const plain = await tokenRequest(spa, undefined)
      expect(plain.status).toBe(200)
      expectNoCors(plain, 'token without Origin')
    })

    it('answer a preflight from an allowed origin with 204 and what it may send; an unknown one gets no allow headers', async () => {
      for (const path of ['/oauth/tokens', '/oauth/revoke']) {
        const allowed = await preflight(`${account.base}${path}`, APP)
        expect(allowed.status, path).toBe(204)
        expectAllowed(allowed, APP, `preflight ${path}`)
        expect(allowed.headers.get('access-control-allow-methods')?.split(/,\s*/).sort(), path).toEqual(['GET', 'POST'])
        expect(allowed.headers.get('access-control-allow-headers')?.split(/,\s*/).sort(), path).toEqual(['authorization', 'content-type'])
        expect(allowed.headers.get('access-control-max-age'), path).toBe('600')

        const refused = await preflight(`${account.base}${path}`, EVIL)
        expect(refused.status, path).toBe(204)
        expectNoCors(refused, `preflight ${path} from ${EVIL}`)
        expectNoCors(await preflight(`${account.base}${path}`, OTHER_APP), `preflight ${path} from ${OTHER_APP}`)
      }
      // An unknown account's preflight is a 404 like everything under its base.
      const unknownAccount = await preflight(`${h.current.origin}/accounts/acct_00000000000000000000000000/oauth/tokens`, APP)
      expect(unknownAccount.status).toBe(404)
      expectNoCors(unknownAccount, 'unknown account')
    })

    it('follow client changes: a changed or deleted client at once, a new one within the cache TTL', async () => {
      const fresh = 'https://fresh.example'
      expectNoCors(await tokenRequest(spa, fresh), 'before registration')

      const created = await manage<RegisteredClient>(account, adminToken, 'POST', '/oauth/clients', { grant_types: ['client_credentials'], allowed_cors_origins: [fresh] })
      expect(created.status).toBe(201)
      // ClientStore.insert announces no cache change (a new client is in no per-client cache), so a new client's
      // origins are picked up within the caches' TTL backstop; changes and deletions take effect at once.
      h.current.clock.advance(CACHE_TTL_MS)
      expectAllowed(await tokenRequest(spa, fresh), fresh, 'after registration')

      expect((await manage(account, adminToken, 'PATCH', `/oauth/clients/${created.body.client_id}`, { allowed_cors_origins: [] })).status).toBe(200)
      expectNoCors(await tokenRequest(spa, fresh), 'after the origin was removed')

      expect((await manage(account, adminToken, 'PATCH', `/oauth/clients/${created.body.client_id}`, { allowed_cors_origins: [fresh, APP] })).status).toBe(200)
      expectAllowed(await tokenRequest(spa, fresh), fresh, 'after the origin was added back')

      expect((await manage(account, adminToken, 'DELETE', `/oauth/clients/${created.body.client_id}`)).status).toBe(204)
      expectNoCors(await tokenRequest(spa, fresh), 'after the client was deleted')
      // APP is still registered by the first client.
      expectAllowed(await tokenRequest(spa, APP), APP, 'other clients keep their origins')
    })
  })

  describe('JWKS', () => {
    it('may be fetched from any origin', async () => {
      for (const origin of [APP, EVIL]) {
        const jwks = await call(`${account.base}/.well-known/jwks.json`, 'GET', { headers: { origin } })
        expect(jwks.status).toBe(200)
        expect(jwks.headers.get('access-control-allow-origin'), origin).toBe('*')
      }
      const preflighted = await call(`${account.base}/.well-known/jwks.json`, 'OPTIONS', { headers: { origin: EVIL, 'access-control-request-method': 'GET' } })
      expect(preflighted.status).toBe(204)
      expect(preflighted.headers.get('access-control-allow-origin')).toBe('*')
    })
  })

  describe('endpoints that never answer CORS', () => {
    it('the management API and introspection send no CORS headers even to an allowed origin', async () => {
      const token = (await tokenRequest(spa, undefined)).body.access_token
      const answers: Array<[string, ApiResponse]> = [
        ['GET /keys', await call(`${account.base}/keys`, 'GET', { token: adminToken, headers: { origin: APP } })],
        ['GET /keys without a token', await call(`${account.base}/keys`, 'GET', { headers: { origin: APP } })],
        ['POST /oauth/clients', await call(`${account.base}/oauth/clients`, 'POST', { token: adminToken, headers: { origin: APP }, json: { grant_types: ['client_credentials'] } })],
        ['GET /oauth/clients', await call(`${account.base}/oauth/clients`, 'GET', { token: adminToken, headers: { origin: APP } })],
        ['OPTIONS /keys', await preflight(`${account.base}/keys`, APP)],
        ['OPTIONS /oauth/clients', await preflight(`${account.base}/oauth/clients`, APP)],
        [
          'POST /oauth/introspect',
          await call(`${account.base}/oauth/introspect`, 'POST', { headers: { authorization: basicAuth(spa.client_id, spa.client_secret), origin: APP }, form: { token } }),
        ],
        ['OPTIONS /oauth/introspect', await preflight(`${account.base}/oauth/introspect`, APP)],
      ]
      for (const [name, answer] of answers) {
        expect(answer.status, `${name}: ${answer.text}`).toBeLessThan(500)
        expectNoCors(answer, name)
      }
      expect(answers.find(([name]) => name === 'GET /keys')![1].status).toBe(200)
      expect(answers.find(([name]) => name === 'POST /oauth/introspect')![1].body).toMatchObject({ active: true })
      expect(answers.find(([name]) => name === 'OPTIONS /keys')![1].status).toBe(404)
    })
  })
})
