import { decodeJwt } from 'jose'
import * as oidc from 'openid-client'
import { beforeAll, describe, expect, it } from 'vitest'
import { PRUNE_GRACE_MS } from '../../src/authorization/revocation/revocation-store.js'
import { type CreatedAccount, type TestHerald, forEachDialect, useHerald } from '../support/herald.js'
import { type ApiResponse, basicAuth, call, createAccount, managementToken } from '../support/http.js'

interface RegisteredClient {
  client_id: string
  client_secret: string
}

/** RFC 6749 §5.2 error object, never cached. */
function expectOAuthError(response: ApiResponse, status: number, error: string): void {
  expect(response.status, response.text).toBe(status)
  expect(response.headers.get('content-type')).toMatch(/^application\/json/)
  expect(response.body).toEqual({ error, error_description: expect.any(String) })
  expect(response.headers.get('cache-control')).toBe('no-store')
}

async function revocationRows(h: TestHerald, accountId: string): Promise<Array<{ jti: string; expires_at: number; revoked_at: number }>> {
  return h.herald.database.db
    .selectFrom('token_revocations')
    .select(['jti', 'expires_at', 'revoked_at'])
    .where('account_id', '=', accountId)
    .orderBy('jti')
    .execute()
}

forEachDialect((dialect) => {
  const h = useHerald(dialect)
  let account: CreatedAccount
  let other: CreatedAccount
  let adminToken: string
  /** The client tokens are issued to. */
  let api: RegisteredClient
  /** A resource server: another client of the same account, which introspects. */
  let resourceServer: RegisteredClient

  const manage = <T = Record<string, unknown>>(target: CreatedAccount, token: string, method: string, path: string, json?: unknown) =>
    call<T>(`${target.base}${path}`, method, { token, ...(json !== undefined && { json }) })

  async function createClient(target: CreatedAccount, token: string, metadata: Record<string, unknown> = {}): Promise<RegisteredClient> {
    const created = await manage<RegisteredClient>(target, token, 'POST', '/oauth/clients', { grant_types: ['client_credentials'], ...metadata })
    if (created.status !== 201) throw new Error(`client registration failed: ${created.status} ${created.text}`)
    return created.body
  }

  /** openid-client, configured from the account's discovery document, authenticating as `client` by HTTP Basic. */
  function configFor(target: CreatedAccount, client: RegisteredClient): Promise<oidc.Configuration> {
    return oidc.discovery(new URL(target.issuer), client.client_id, undefined, oidc.ClientSecretBasic(client.client_secret), {
      execute: [oidc.allowInsecureRequests],
    })
  }

  async function issue(target: CreatedAccount, client: RegisteredClient): Promise<string> {
    const response = await call<{ access_token: string }>(`${target.base}/oauth/tokens`, 'POST', {
      headers: { authorization: basicAuth(client.client_id, client.client_secret) },
      form: { grant_type: 'client_credentials' },
    })
    if (response.status !== 200) throw new Error(`token request failed: ${response.status} ${response.text}`)
    return response.body.access_token
  }

  const introspect = (target: CreatedAccount, caller: RegisteredClient, form: Record<string, string | string[]>) =>
    call(`${target.base}/oauth/introspect`, 'POST', { headers: { authorization: basicAuth(caller.client_id, caller.client_secret) }, form })

  const revoke = (target: CreatedAccount, caller: RegisteredClient, form: Record<string, string | string[]>) =>
    call(`${target.base}/oauth/revoke`, 'POST', { headers: { authorization: basicAuth(caller.client_id, caller.client_secret) }, form })

  async function isActive(target: CreatedAccount, caller: RegisteredClient, token: string): Promise<boolean> {
    const answer = await introspect(target, caller, { token })
    expect(answer.status, answer.text).toBe(200)
    if (answer.body.active === false) expect(answer.body).toEqual({ active: false })
    return answer.body.active === true
  }

  const admin = (target: CreatedAccount): RegisteredClient => ({ client_id: target.clientId, client_secret: target.clientSecret })

  beforeAll(async () => {
    account = await createAccount(h.current, 'introspection')
    other = await createAccount(h.current, 'other')
    adminToken = await managementToken(account)
    expect((await manage(account, adminToken, 'POST', '/oauth/scopes', { name: 'orders:read' })).status).toBe(201)
    api = await createClient(account, adminToken, { client_name: 'api', scope: 'orders:read', audience: ['https://orders.example'] })
    resourceServer = await createClient(account, adminToken, { client_name: 'orders resource server' })
  })

  describe('introspection (RFC 7662)', () => {
    it('answers an active token with its claims, to any client of the account, through openid-client', async () => {
      const token = await issue(account, api)
      const claims = decodeJwt(token)
      const config = await configFor(account, resourceServer)
      const answer = await oidc.tokenIntrospection(config, token)
      expect(answer).toEqual({
        active: true,
        scope: 'orders:read',
        client_id: api.client_id,
        token_type: 'Bearer',
        exp: claims.exp,
        iat: claims.iat,
        sub: api.client_id,
        aud: 'https://orders.example',
        iss: account.issuer,
        jti: claims.jti,
      })
      expect(claims.exp! - claims.iat!).toBe(3600)

      const own = await introspect(account, api, { token })
      expect(own.status).toBe(200)
      expect(own.body).toMatchObject({ active: true, jti: claims.jti })
      expect(own.headers.get('cache-control')).toBe('no-store')

      // A client registered for client_secret_post introspects with it, as at the token endpoint.
      const poster = await createClient(account, adminToken, { token_endpoint_auth_method: 'client_secret_post' })
      const posted = await call(`${account.base}/oauth/introspect`, 'POST', {
        form: { token, token_type_hint: 'access_token', client_id: poster.client_id, client_secret: poster.client_secret },
      })
      expect(posted.status, posted.text).toBe(200)
      expect(posted.body).toMatchObject({ active: true, jti: claims.jti })
      expectOAuthError(await introspect(account, poster, { token }), 401, 'invalid_client')
    })

    it('is inactive once the token expires on the clock, not a second before', async () => {
      const shortLived = await createClient(account, adminToken, { access_token_ttl: 60 })
      const token = await issue(account, shortLived)
      const { exp } = decodeJwt(token)
      h.current.clock.advance(exp! * 1000 - h.current.clock.now() - 1000)
      expect(await isActive(account, resourceServer, token)).toBe(true)
      h.current.clock.advance(1000)
      expect(await isActive(account, resourceServer, token)).toBe(false)
    })

    it("is inactive at B for A's token, which stays active at A", async () => {
      const otherAdmin = admin(other)
      const foreign = await issue(other, otherAdmin)
      expect(await isActive(other, otherAdmin, foreign)).toBe(true)
      expect(await isActive(account, resourceServer, foreign)).toBe(false)
      // And B's clients can't introspect at A at all.
      expectOAuthError(await introspect(account, otherAdmin, { token: foreign }), 401, 'invalid_client')
    })

    it('is inactive once the client the token was issued to is deleted', async () => {
      const doomed = await createClient(account, adminToken)
      const token = await issue(account, doomed)
      expect(await isActive(account, resourceServer, token)).toBe(true)
      expect((await manage(account, adminToken, 'DELETE', `/oauth/clients/${doomed.client_id}`)).status).toBe(204)
      expect(await isActive(account, resourceServer, token)).toBe(false)
    })

    it("is inactive for tokens issued before the client's secret was rotated, active for those after", async () => {
      const rotating = await createClient(account, adminToken)
      const before = await issue(account, rotating)
      expect(await isActive(account, resourceServer, before)).toBe(true)
      // iat has one-second precision: a rotation in the very second of issue can't be told apart.
      h.current.clock.advance(1000)
      const rotated = await manage<RegisteredClient>(account, adminToken, 'POST', `/oauth/clients/${rotating.client_id}/secret`)
      expect(rotated.status).toBe(200)
      expect(await isActive(account, resourceServer, before)).toBe(false)
      const after = await issue(account, { client_id: rotating.client_id, client_secret: rotated.body.client_secret })
      expect(await isActive(account, resourceServer, after)).toBe(true)
    })

    it('is inactive for garbage and for tokens that are not access tokens, and ignores any hint', async () => {
      const token = await issue(account, api)
      const [header, payload] = token.split('.')
      for (const garbage of ['abc', `${header}.${payload}.`, `${header}.${payload}.AAAA`, account.clientSecret, 'a'.repeat(8000)]) {
        const answer = await introspect(account, resourceServer, { token: garbage })
        expect(answer.status, garbage.slice(0, 40)).toBe(200)
        expect(answer.body).toEqual({ active: false })
        expect(answer.headers.get('cache-control')).toBe('no-store')
      }
      for (const hint of ['refresh_token', 'access_token', 'no_such_type']) {
        const answer = await introspect(account, resourceServer, { token, token_type_hint: hint, unknown_parameter: 'ignored' })
        expect(answer.body.active, hint).toBe(true)
      }
    })

    it('refuses callers that are not authenticated clients with invalid_client', async () => {
      const token = await issue(account, api)
      const anonymous = await call(`${account.base}/oauth/introspect`, 'POST', { form: { token } })
      expectOAuthError(anonymous, 401, 'invalid_client')
      const wrongSecret = await introspect(account, { ...resourceServer, client_secret: 'not-the-secret' }, { token })
      expectOAuthError(wrongSecret, 401, 'invalid_client')
      expect(wrongSecret.headers.get('www-authenticate')).toMatch(/^Basic /)
      // A bearer token is not client authentication.
      const bearer = await call(`${account.base}/oauth/introspect`, 'POST', { token: adminToken, form: { token } })
      expectOAuthError(bearer, 401, 'invalid_client')
    })
  })

  describe('revocation (RFC 7009)', () => {
    it('revokes a token of the calling client through openid-client: introspection and the management API refuse it', async () => {
      const managementClient = admin(account)
      const token = await managementToken(account, 'herald:keys:write')
      expect((await call(`${account.base}/keys`, 'GET', { token })).status).toBe(200)
      expect(await isActive(account, resourceServer, token)).toBe(true)

      await oidc.tokenRevocation(await configFor(account, managementClient), token)

      const refused = await call(`${account.base}/keys`, 'GET', { token })
      expect(refused.status).toBe(401)
      expect(refused.body).toMatchObject({ code: 'invalid_token', detail: 'The access token has been revoked' })
      expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/)
      expect(await isActive(account, resourceServer, token)).toBe(false)

      const { jti, exp } = decodeJwt(token)
      const row = (await revocationRows(h.current, account.id)).find((candidate) => candidate.jti === jti)
      expect(row).toEqual({ jti, expires_at: exp! * 1000, revoked_at: h.current.clock.now() })
      // Other tokens of the same client are untouched.
      expect((await call(`${account.base}/keys`, 'GET', { token: await managementToken(account, 'herald:keys:write') })).status).toBe(200)
    })

    it('answers each of many concurrent management requests by its own token, revoked or not', async () => {
      const managementClient = admin(account)
      const revoked = await managementToken(account, 'herald:keys:write')
      const live = await managementToken(account, 'herald:keys:write')
      await oidc.tokenRevocation(await configFor(account, managementClient), revoked)
      // Concurrent requests share one revocation lookup: every answer must still be for its own token.
      const tokens = Array.from({ length: 30 }, (_, n) => (n % 3 === 0 ? revoked : live))
      const answers = await Promise.all(tokens.map((token) => call(`${account.base}/keys`, 'GET', { token })))
      expect(answers.map((answer) => answer.status)).toEqual(tokens.map((token) => (token === revoked ? 401 : 200)))
    })

    it('is idempotent: a second revocation answers 200 and records nothing more', async () => {
      const token = await issue(account, api)
      const { jti } = decodeJwt(token)
      const first = await revoke(account, api, { token, token_type_hint: 'access_token' })
      expect(first.status).toBe(200)
      expect(first.text).toBe('')
      const second = await revoke(account, api, { token })
      expect(second.status, second.text).toBe(200)
      expect((await revocationRows(h.current, account.id)).filter((row) => row.jti === jti)).toHaveLength(1)
      const events = await h.current.herald.database.db
        .selectFrom('events')
        .select('data')
        .where('account_id', '=', account.id)
        .where('type', '=', 'oauth.token.revoked')
        .execute()
      expect(events.filter((event) => event.data.includes(jti!))).toHaveLength(1)
      expect(JSON.parse(events.find((event) => event.data.includes(jti!))!.data)).toMatchObject({ jti, client_id: api.client_id })

      // Concurrent revocations can all pass verification before any records: the insert itself is idempotent.
      const { revocations } = h.current.herald
      const again = { jti: jti!, clientId: api.client_id, expiresAt: decodeJwt(token).exp! * 1000 }
      expect(await revocations.revoke(account.id, again, h.current.clock.now())).toBe(false)
      const raced = await issue(account, api)
      const answers = await Promise.all(Array.from({ length: 5 }, () => revoke(account, api, { token: raced })))
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200])
      expect((await revocationRows(h.current, account.id)).filter((row) => row.jti === decodeJwt(raced).jti)).toHaveLength(1)
    })

    it("has no effect when another client of the account asks, and says so to nobody", async () => {
      const token = await issue(account, api)
      const rowsBefore = await revocationRows(h.current, account.id)
      const answer = await revoke(account, resourceServer, { token })
      expect(answer.status, answer.text).toBe(200)
      expect(await revocationRows(h.current, account.id)).toEqual(rowsBefore)
      expect(await isActive(account, resourceServer, token)).toBe(true)
      // Through openid-client too: no error, no effect.
      await oidc.tokenRevocation(await configFor(account, admin(account)), token)
      expect(await isActive(account, resourceServer, token)).toBe(true)
      // A client of another account can't authenticate here at all.
      expectOAuthError(await revoke(account, admin(other), { token }), 401, 'invalid_client')
      expect(await isActive(account, resourceServer, token)).toBe(true)
    })

    it("doesn't let account B's client revoke A's token at B's endpoint", async () => {
      const token = await issue(account, api)
      const answer = await revoke(other, admin(other), { token })
      expect(answer.status).toBe(200)
      expect(await revocationRows(h.current, other.id)).toEqual([])
      expect(await isActive(account, resourceServer, token)).toBe(true)
    })

    it('answers 200 to garbage and unknown hints, and 401 to an unauthenticated caller', async () => {
      const rowsBefore = await revocationRows(h.current, account.id)
      const forms: Array<Record<string, string>> = [{ token: 'not-a-token' }, { token: 'a.b.c', token_type_hint: 'refresh_token' }, { token: 'x', token_type_hint: 'no_such_type' }]
      for (const form of forms) {
        const answer = await revoke(account, api, form)
        expect(answer.status, JSON.stringify(form)).toBe(200)
      }
      expect(await revocationRows(h.current, account.id)).toEqual(rowsBefore)

      const token = await issue(account, api)
      expectOAuthError(await call(`${account.base}/oauth/revoke`, 'POST', { form: { token } }), 401, 'invalid_client')
      expectOAuthError(await revoke(account, { ...api, client_secret: 'wrong' }, { token }), 401, 'invalid_client')
      expect(await isActive(account, resourceServer, token)).toBe(true)

      // An unsupported hint is ignored (RFC 7009 §2.1 allows it): the token is still revoked.
      expect((await revoke(account, api, { token, token_type_hint: 'no_such_type' })).status).toBe(200)
      expect(await isActive(account, resourceServer, token)).toBe(false)
    })
  })

  describe('garbage in, RFC 6749 errors out', () => {
    for (const endpoint of ['introspect', 'revoke'] as const) {
      it(`${endpoint}: missing, empty or repeated token, JSON and other bodies are invalid_request, never a 500`, async () => {
        const url = `${account.base}/oauth/${endpoint}`
        const auth = { authorization: basicAuth(api.client_id, api.client_secret) }
        const token = await issue(account, api)
        const cases: Array<[string, ApiResponse]> = [
          ['missing token', await call(url, 'POST', { headers: auth, form: { token_type_hint: 'access_token' } })],
          ['empty token', await call(url, 'POST', { headers: auth, form: { token: '' } })],
          ['repeated token', await call(url, 'POST', { headers: auth, form: { token: [token, token] } })],
          ['repeated hint', await call(url, 'POST', { headers: auth, form: { token, token_type_hint: ['access_token', 'refresh_token'] } })],
          ['JSON body', await call(url, 'POST', { headers: auth, json: { token } })],
          ['text body', await call(url, 'POST', { headers: { ...auth, 'content-type': 'text/plain' }, body: `token=${token}` })],
          ['no body', await call(url, 'POST', { headers: auth })],
          ['Basic and client_secret', await call(url, 'POST', { headers: auth, form: { token, client_secret: api.client_secret } })],
        ]
        for (const [name, answer] of cases) {
          expect(answer.status, `${name}: ${answer.status} ${answer.text}`).toBe(400)
          expectOAuthError(answer, 400, 'invalid_request')
        }
        // A broken percent-escape is decoded leniently (WHATWG URLSearchParams): the token is then just not one.
        const broken = await call(url, 'POST', { headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, body: 'token=%E0%A4%A' })
        expect(broken.status, broken.text).toBe(200)
        if (endpoint === 'introspect') expect(broken.body).toEqual({ active: false })
        // Nothing was revoked by any of it.
        expect(await isActive(account, resourceServer, token)).toBe(true)
        const tooLarge = await call(url, 'POST', { headers: auth, form: { token: 'a'.repeat(20_000) } })
        expect(tooLarge.status).toBeGreaterThanOrEqual(400)
        expect(tooLarge.status).toBeLessThan(500)
        expect(tooLarge.body).toMatchObject({ error: expect.any(String) })
      })
    }
  })

  describe('pruning revocation records', () => {
    it('removes only the records of tokens that have expired, past the grace margin', async () => {
      const shortLived = await createClient(account, adminToken, { access_token_ttl: 60 })
      const soon = await issue(account, shortLived)
      const later = await issue(account, api)
      expect((await revoke(account, shortLived, { token: soon })).status).toBe(200)
      expect((await revoke(account, api, { token: later })).status).toBe(200)
      const jtiOf = (token: string) => decodeJwt(token).jti!
      const present = async () => (await revocationRows(h.current, account.id)).map((row) => row.jti)
      expect(await present()).toEqual(expect.arrayContaining([jtiOf(soon), jtiOf(later)]))

      // Expired, but within the grace margin: kept.
      h.current.clock.advance(60_000)
      await h.current.herald.pruners.revocations.runOnce()
      expect(await present()).toContain(jtiOf(soon))

      h.current.clock.advance(PRUNE_GRACE_MS)
      await h.current.herald.pruners.revocations.runOnce()
      expect(await present()).not.toContain(jtiOf(soon))
      expect(await present()).toContain(jtiOf(later))
      expect(await isActive(account, resourceServer, later)).toBe(false)
    })

    it('deletes in bounded batches', async () => {
      const now = h.current.clock.now()
      const { db } = h.current.herald.database
      const expired = ['prune-a', 'prune-b', 'prune-c'].map((jti) => ({ account_id: other.id, jti, expires_at: now - 1, revoked_at: now - 1000 }))
      const live = { account_id: other.id, jti: 'prune-live', expires_at: now + 60_000, revoked_at: now - 1000 }
      await db.insertInto('token_revocations').values([...expired, live]).execute()
      const { revocations } = h.current.herald
      expect(await revocations.pruneExpired(now, 2)).toBe(2)
      expect(await revocations.pruneExpired(now, 2)).toBe(1)
      expect(await revocations.pruneExpired(now, 2)).toBe(0)
      expect((await revocationRows(h.current, other.id)).map((row) => row.jti)).toEqual(['prune-live'])
    })
  })

  it('advertises both endpoints and their client authentication methods in discovery', async () => {
    const metadata = await call(`${account.issuer}/.well-known/openid-configuration`, 'GET')
    expect(metadata.body).toMatchObject({
      introspection_endpoint: `${account.issuer}/oauth/introspect`,
      revocation_endpoint: `${account.issuer}/oauth/revoke`,
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    })
  })
})
