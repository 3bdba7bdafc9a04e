import { SignJWT, decodeJwt, decodeProtectedHeader, generateKeyPair, type JWTHeaderParameters } from 'jose'
import { describe, expect, it } from 'vitest'
import { DEFAULT_SETTINGS } from '../../src/platform/settings/settings.js'
import { type CreatedAccount, OPERATOR_TOKEN, type TestHerald, forEachDialect, startHerald, useHerald } from '../support/herald.js'
import { type ApiResponse, basicAuth, call, createAccount, managementToken } from '../support/http.js'

interface KeyView {
  kid: string
  alg: string
  status: string
}

interface AccountView {
  id: string
  status: string
}

interface Jwks {
  keys: Array<{ kid: string }>
}

/** An RFC 9457 answer of the management or operator API, with the stable `code`. */
function expectProblem(response: ApiResponse, status: number, code: string): void {
  expect(response.status, response.text).toBe(status)
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/)
  expect(response.body).toMatchObject({ status, code, type: `urn:herald:problem:${code}` })
}

/** RFC 6750 §3.1: a 401 whose challenge tells the client to get a new token. */
function expectInvalidToken(response: ApiResponse): void {
  expectProblem(response, 401, 'invalid_token')
  expect(response.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/)
}

/** RFC 6749 §5.2: the token endpoint's own error object, not a problem document. */
function expectInvalidClient(response: ApiResponse): void {
  expect(response.status, response.text).toBe(401)
  expect(response.headers.get('content-type')).toMatch(/^application\/json/)
  expect(response.body).toEqual({ error: 'invalid_client', error_description: expect.any(String) })
  expect(response.headers.get('www-authenticate')).toMatch(/^Basic /)
}

function requestToken(account: CreatedAccount, clientId: string, secret: string): Promise<ApiResponse<{ access_token: string; expires_in: number }>> {
  return call(`${account.base}/oauth/tokens`, 'POST', {
    headers: { authorization: basicAuth(clientId, secret) },
    form: { grant_type: 'client_credentials' },
  })
}

const listKeys = (account: CreatedAccount, token: string) => call<{ data: KeyView[] }>(`${account.base}/keys`, 'GET', { token })
const jwksOf = (account: CreatedAccount) => call<Jwks>(`${account.base}/.well-known/jwks.json`, 'GET')
const operator = (h: TestHerald, path: string, method: string, json?: unknown) =>
  call<Record<string, unknown>>(`${h.origin}${path}`, method, { token: OPERATOR_TOKEN, ...(json !== undefined && { json }) })

async function signingKeyRows(h: TestHerald, accountId: string): Promise<number> {
  const row = await h.herald.database.db
    .selectFrom('signing_keys')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

async function revokedKeyRows(h: TestHerald, accountId: string): Promise<number> {
  const row = await h.herald.database.db
    .selectFrom('signing_keys')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is not', null)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

async function accountRows(h: TestHerald): Promise<number> {
  const row = await h.herald.database.db.selectFrom('accounts').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()
  return Number(row.n)
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

forEachDialect((dialect) => {
  const h = useHerald(dialect)

  describe("another account's credentials", () => {
    it("refuses account B's management token on account A's base with 401 invalid_token, and leaves A's keys alone", async () => {
      const a = await createAccount(h.current, 'tenant-a')
      const b = await createAccount(h.current, 'tenant-b')
      const tokenA = await managementToken(a)
      const tokenB = await managementToken(b)
      const keysBefore = await listKeys(a, tokenA)
      expect(keysBefore.status).toBe(200)
      const rowsBefore = await signingKeyRows(h.current, a.id)
      const kidOfA = keysBefore.body.data[0]!.kid

      // B's token works on B's own base: the refusals below are about the issuer, not the token.
      expect((await call(`${b.base}/keys`, 'GET', { token: tokenB })).status).toBe(200)

      expectInvalidToken(await call(`${a.base}/keys`, 'GET', { token: tokenB }))
      expectInvalidToken(await call(`${a.base}/keys/rotate`, 'POST', { token: tokenB }))
      expectInvalidToken(await call(`${a.base}/keys/${kidOfA}/revoke`, 'POST', { token: tokenB }))

      const keysAfter = await listKeys(a, tokenA)
      expect(keysAfter.status).toBe(200)
      expect(keysAfter.body.data).toEqual(keysBefore.body.data)
      expect(await signingKeyRows(h.current, a.id)).toBe(rowsBefore)
      expect(await revokedKeyRows(h.current, a.id)).toBe(0)
    })

    it("answers 404 not_found for A's key id under B's base, and A's key stays published", async () => {
      const a = await createAccount(h.current, 'tenant-a')
      const b = await createAccount(h.current, 'tenant-b')
      const kids = (await listKeys(a, await managementToken(a))).body.data.map((key) => key.kid)
      expect(kids).toHaveLength(2)
      const tokenB = await managementToken(b)

      for (const kid of kids) {
        expectProblem(await call(`${b.base}/keys/${kid}/revoke`, 'POST', { token: tokenB }), 404, 'not_found')
      }

      const jwks = await jwksOf(a)
      expect(jwks.status).toBe(200)
      expect(jwks.body.keys.map((key) => key.kid).sort()).toEqual([...kids].sort())
      expect(await revokedKeyRows(h.current, a.id)).toBe(0)
      expect(await revokedKeyRows(h.current, b.id)).toBe(0)
    })

    it("refuses A's admin client credentials at B's token endpoint with an RFC 6749 invalid_client", async () => {
      const a = await createAccount(h.current, 'tenant-a')
      const b = await createAccount(h.current, 'tenant-b')
      expect((await requestToken(a, a.clientId, a.clientSecret)).status).toBe(200)

      const response = await requestToken(b, a.clientId, a.clientSecret)
      expectInvalidClient(response)
      expect(response.body).not.toHaveProperty('access_token')
    })
  })

  describe('scopes and token lifetime', () => {
    it("answers 403 insufficient_scope when the token lacks the route's scope, and changes nothing", async () => {
      const a = await createAccount(h.current)
      const token = await managementToken(a, 'herald:clients:read')
      const rowsBefore = await signingKeyRows(h.current, a.id)

      for (const response of [await call(`${a.base}/keys`, 'GET', { token }), await call(`${a.base}/keys/rotate`, 'POST', { token })]) {
        expectProblem(response, 403, 'insufficient_scope')
        expect(response.headers.get('www-authenticate')).toMatch(/^Bearer error="insufficient_scope"/)
      }
      expect(await signingKeyRows(h.current, a.id)).toBe(rowsBefore)
      // The same account, with the scope, may.
      expect((await listKeys(a, await managementToken(a, 'herald:keys:write'))).status).toBe(200)
    })

    it('accepts a token one second before it expires and refuses it with 401 invalid_token from its expiry on', async () => {
      const a = await createAccount(h.current)
      const issued = await requestToken(a, a.clientId, a.clientSecret)
      expect(issued.body.expires_in).toBe(DEFAULT_SETTINGS.access_token_ttl)
      const token = issued.body.access_token

      h.current.clock.advanceSeconds(DEFAULT_SETTINGS.access_token_ttl - 1)
      expect((await listKeys(a, token)).status).toBe(200)

      h.current.clock.advanceSeconds(1)
      expectInvalidToken(await listKeys(a, token))
      // A fresh token from the same client still works: only the old one expired.
      expect((await listKeys(a, await managementToken(a))).status).toBe(200)
    })
  })

  describe('malformed and forged tokens', () => {
    it('refuses each with 401 invalid_token, never a 500', async () => {
      const a = await createAccount(h.current)
      const genuine = await managementToken(a, 'herald:keys:write')
      expect((await listKeys(a, genuine)).status).toBe(200)

      const header = decodeProtectedHeader(genuine) as JWTHeaderParameters
      const claims = decodeJwt(genuine)
      const [encodedHeader, encodedPayload, encodedSignature] = genuine.split('.') as [string, string, string]
      const signature = Buffer.from(encodedSignature, 'base64url')
      signature[10]! ^= 0x01
      const { privateKey: foreignKey } = await generateKeyPair('ES256')

      const forged: Record<string, string> = {
        garbage: 'this-is-not-a-token',
        'three garbage segments': 'abc.def.ghi',
        'alg none': `${b64({ ...header, alg: 'none' })}.${encodedPayload}.`,
        'altered signature': `${encodedHeader}.${encodedPayload}.${signature.toString('base64url')}`,
        'altered payload': `${encodedHeader}.${b64({ ...claims, scope: 'herald:keys:write herald:clients:write' })}.${encodedSignature}`,
        "foreign key under the account's kid": await new SignJWT(claims).setProtectedHeader(header).sign(foreignKey),
        'foreign key under its own kid': await new SignJWT(claims).setProtectedHeader({ ...header, kid: 'key_foreign' }).sign(foreignKey),
        'foreign key without a kid': await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt' }).sign(foreignKey),
      }
      for (const [name, token] of Object.entries(forged)) {
        const response = await listKeys(a, token)
        expect(response.status, name).toBe(401)
        expectInvalidToken(response)
      }

      for (const authorization of ['Bearer', 'Bearer ', `Bearer ${genuine} extra`, basicAuth(a.clientId, a.clientSecret), genuine]) {
        expectInvalidToken(await call(`${a.base}/keys`, 'GET', { headers: { authorization } }))
      }
      expectInvalidToken(await call(`${a.base}/keys`, 'GET'))
      expect(h.current.logs.join('')).not.toContain('unhandled error')
    })
  })

  describe('herald accounts reset-admin', () => {
    it('replaces the admin secret: the old secret and the tokens issued under it stop working, the new one works', async () => {
      const a = await createAccount(h.current)
      const other = await createAccount(h.current, 'bystander')
      const oldToken = await managementToken(a)
      const otherToken = await managementToken(other)
      expect((await listKeys(a, oldToken)).status).toBe(200)

      h.current.clock.advanceSeconds(1)
      const reset = await h.current.herald.accounts.resetAdmin(a.id)
      expect(reset.client_id).toBe(a.clientId)
      expect(reset.client_secret).not.toBe(a.clientSecret)

      expectInvalidClient(await requestToken(a, a.clientId, a.clientSecret))
      const fresh = await requestToken(a, reset.client_id, reset.client_secret)
      expect(fresh.status, fresh.text).toBe(200)
      expect((await listKeys(a, fresh.body.access_token)).status).toBe(200)
      expectInvalidToken(await listKeys(a, oldToken))

      // Another account's admin is untouched.
      expect((await listKeys(other, otherToken)).status).toBe(200)
      expect((await requestToken(other, other.clientId, other.clientSecret)).status).toBe(200)
    })
  })

  describe('a disabled account', () => {
    /** Every public and management endpoint of an account, as (label, request) pairs. */
    function endpoints(account: CreatedAccount, token: string): Array<[string, () => Promise<ApiResponse>]> {
      return [
        ['token endpoint', () => requestToken(account, account.clientId, account.clientSecret)],
        ['JWKS', () => call(`${account.base}/.well-known/jwks.json`, 'GET')],
        ['OIDC discovery', () => call(`${account.base}/.well-known/openid-configuration`, 'GET')],
        ['RFC 8414 metadata alias', () => call(`${account.base}/.well-known/oauth-authorization-server`, 'GET')],
        ['RFC 8414 metadata', () => call(`${h.current.origin}/.well-known/oauth-authorization-server/accounts/${account.id}`, 'GET')],
        ['management API', () => call(`${account.base}/keys`, 'GET', { token })],
      ]
    }

    async function expectAllWork(account: CreatedAccount, token: string): Promise<void> {
      for (const [label, request] of endpoints(account, token)) expect((await request()).status, label).toBe(200)
    }

    it('vanishes (404 everywhere, old tokens refused) while disabled and works again once re-enabled; others are unaffected', async () => {
      const a = await createAccount(h.current, 'to-disable')
      const bystander = await createAccount(h.current, 'bystander')
      const tokenBefore = await managementToken(a)
      const bystanderToken = await managementToken(bystander)
      await expectAllWork(a, tokenBefore)
      const jwksBefore = (await jwksOf(a)).body
      const rowsBefore = await signingKeyRows(h.current, a.id)

      const disabled = await operator(h.current, `/accounts/${a.id}`, 'PATCH', { status: 'disabled' })
      expect(disabled.status, disabled.text).toBe(200)
      expect(disabled.body).toMatchObject({ id: a.id, status: 'disabled', issuer: a.issuer })
      expect((await operator(h.current, `/accounts/${a.id}`, 'GET')).body).toMatchObject({ status: 'disabled' })

      for (const [label, request] of endpoints(a, tokenBefore)) {
        const response = await request()
        expect(response.status, label).toBe(404)
        expectProblem(response, 404, 'not_found')
      }
      expectProblem(await call(`${a.base}/keys/rotate`, 'POST', { token: tokenBefore }), 404, 'not_found')
      expect(await signingKeyRows(h.current, a.id)).toBe(rowsBefore)
      await expectAllWork(bystander, bystanderToken)

      const enabled = await operator(h.current, `/accounts/${a.id}`, 'PATCH', { status: 'active' })
      expect(enabled.status, enabled.text).toBe(200)
      expect(enabled.body).toMatchObject({ id: a.id, status: 'active' })
      await expectAllWork(a, await managementToken(a))
      expect((await jwksOf(a)).body).toEqual(jwksBefore)
      await expectAllWork(bystander, bystanderToken)
    })

    it('answers 404 not_found when the operator disables an account that does not exist', async () => {
      const before = await accountRows(h.current)
      expectProblem(await operator(h.current, '/accounts/acct_doesnotexist', 'PATCH', { status: 'disabled' }), 404, 'not_found')
      expect(await accountRows(h.current)).toBe(before)
    })
  })

  describe('the operator API', () => {
    it('refuses a missing or wrong operator token with 401 invalid_token and creates nothing', async () => {
      const a = await createAccount(h.current)
      const adminToken = await managementToken(a)
      const before = await accountRows(h.current)
      const wrong = [undefined, 'wrong-operator-token', `${OPERATOR_TOKEN}x`, OPERATOR_TOKEN.slice(0, -1), adminToken]

      for (const token of wrong) {
        const label = token === undefined ? 'no token' : token.slice(0, 12)
        const created = await call(`${h.current.origin}/accounts`, 'POST', { json: { name: 'intruder' }, ...(token !== undefined && { token }) })
        expect(created.status, label).toBe(401)
        expectInvalidToken(created)
        expectInvalidToken(await call(`${h.current.origin}/accounts`, 'GET', { ...(token !== undefined && { token }) }))
        expectInvalidToken(await call(`${h.current.origin}/accounts/${a.id}`, 'PATCH', { json: { status: 'disabled' }, ...(token !== undefined && { token }) }))
      }
      expectInvalidToken(await call(`${h.current.origin}/accounts`, 'GET', { headers: { authorization: basicAuth('operator', OPERATOR_TOKEN) } }))

      expect(await accountRows(h.current)).toBe(before)
      expect((await operator(h.current, `/accounts/${a.id}`, 'GET')).body).toMatchObject({ status: 'active' })
    })

    it('does not exist (404 route_not_found) when no operator token is configured', async () => {
      const bare = await startHerald(dialect, { env: { HERALD_OPERATOR_TOKEN: '' } })
      try {
        for (const token of [undefined, OPERATOR_TOKEN]) {
          const auth = token === undefined ? {} : { token }
          expectProblem(await call(`${bare.origin}/accounts`, 'POST', { json: { name: 'acme' }, ...auth }), 404, 'route_not_found')
          expectProblem(await call(`${bare.origin}/accounts`, 'GET', auth), 404, 'route_not_found')
          expectProblem(await call(`${bare.origin}/accounts/acct_x`, 'PATCH', { json: { status: 'disabled' }, ...auth }), 404, 'route_not_found')
        }
        expect(await accountRows(bare)).toBe(0)
      } finally {
        await bare.close()
      }
    })

    it('pages GET /accounts with limit and next_cursor, listing every account exactly once', async () => {
      const created = [await createAccount(h.current, 'page-1'), await createAccount(h.current, 'page-2'), await createAccount(h.current, 'page-3')]
      const seen: string[] = []
      let cursor: string | null = null
      let pages = 0
      do {
        const query: string = cursor === null ? 'limit=2' : `limit=2&cursor=${encodeURIComponent(cursor)}`
        const page = await call<{ data: AccountView[]; next_cursor: string | null }>(`${h.current.origin}/accounts?${query}`, 'GET', { token: OPERATOR_TOKEN })
        expect(page.status, page.text).toBe(200)
        expect(page.body.data.length).toBeGreaterThan(0)
        expect(page.body.data.length).toBeLessThanOrEqual(2)
        seen.push(...page.body.data.map((account) => account.id))
        cursor = page.body.next_cursor
        pages++
        expect(pages).toBeLessThan(100)
      } while (cursor !== null)

      expect(pages).toBeGreaterThanOrEqual(2)
      expect(new Set(seen).size).toBe(seen.length)
      expect(seen).toHaveLength(await accountRows(h.current))
      for (const account of created) expect(seen.filter((id) => id === account.id)).toHaveLength(1)
    })

    it('refuses a cursor it did not issue with 400 validation_failed', async () => {
      await createAccount(h.current)
      for (const cursor of ['not a cursor!', '_w', 'YWNjdA==', '']) {
        const response = await call(`${h.current.origin}/accounts?limit=2&cursor=${encodeURIComponent(cursor)}`, 'GET', { token: OPERATOR_TOKEN })
        expect(response.status, `cursor ${JSON.stringify(cursor)}`).toBe(400)
        expectProblem(response, 400, 'validation_failed')
      }
    })
  })
})
