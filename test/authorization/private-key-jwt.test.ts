import { randomBytes } from 'node:crypto'
import { type Server, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type CryptoKey, type JWK, type JWTPayload, SignJWT, UnsecuredJWT, decodeJwt, exportJWK, generateKeyPair } from 'jose'
import * as oidc from 'openid-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  ASSERTION_CLOCK_TOLERANCE_S,
  ASSERTION_SIGNING_ALGS,
  CLIENT_ASSERTION_TYPE,
  MAX_ASSERTION_LIFETIME_S,
  assertionLifetimeProblem,
} from '../../src/authorization/token/client-assertion.js'
import {
  ClientKeySets,
  JWKS_CACHE_TTL_MS,
  JWKS_FAILURE_BACKOFF_MS,
  JWKS_REFETCH_COOLDOWN_MS,
  KeySetUnavailableError,
} from '../../src/authorization/clients/client-key-sets.js'
import { DEFAULT_METADATA } from '../../src/authorization/clients/client-metadata.js'
import type { RegisteredClient } from '../../src/authorization/clients/client-store.js'
import { ConfigError, loadConfig } from '../../src/platform/config.js'
import { newId } from '../../src/platform/ids.js'
import { createLogger } from '../../src/platform/logger.js'
import { parseCidrList } from '../../src/platform/outbound/addresses.js'
import { createGuardedAgent } from '../../src/platform/outbound/guarded-agent.js'
import { transaction } from '../../src/platform/storage/transaction.js'
import { TestClock } from '../support/clock.js'
import { type CreatedAccount, type TestHerald, forEachDialect, useHerald } from '../support/herald.js'
import { type ApiResponse, basicAuth, call, createAccount, managementToken } from '../support/http.js'

interface ClientBody {
  client_id: string
  client_secret?: string
}

interface SigningKey {
  alg: string
  kid: string
  privateKey: CryptoKey
  publicJwk: JWK
}

type OAuthBody = { error?: string; error_description?: string; access_token?: string }

async function signingKey(alg: string = 'ES256', kid = `k-${randomBytes(4).toString('hex')}`): Promise<SigningKey> {
  const { privateKey, publicKey } = alg === 'EdDSA' ? await generateKeyPair('EdDSA', { crv: 'Ed25519' }) : await generateKeyPair(alg)
  return { alg, kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, use: 'sig' } }
}

/** A client assertion timed by Herald's test clock; `claims` and `header` override or (with undefined) remove fields. */
async function assertion(
  h: TestHerald,
  account: CreatedAccount,
  clientId: string,
  key: SigningKey,
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
): Promise<string> {
  const now = Math.floor(h.clock.now() / 1000)
  const payload: Record<string, unknown> = { iss: clientId, sub: clientId, aud: account.issuer, iat: now, exp: now + 60, jti: randomBytes(12).toString('hex'), ...claims }
  for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name]
  const protectedHeader: Record<string, unknown> = { alg: key.alg, kid: key.kid, ...header }
  if (protectedHeader.kid === undefined) delete protectedHeader.kid
  return new SignJWT(payload as JWTPayload).setProtectedHeader(protectedHeader as { alg: string }).sign(key.privateKey)
}

function tokenRequest(account: CreatedAccount, form: Record<string, string>, headers: Record<string, string> = {}): Promise<ApiResponse<OAuthBody>> {
  return call<OAuthBody>(`${account.base}/oauth/tokens`, 'POST', { form: { grant_type: 'client_credentials', ...form }, headers })
}

function withAssertion(jwt: string, extra: Record<string, string> = {}): Record<string, string> {
  return { client_assertion_type: CLIENT_ASSERTION_TYPE, client_assertion: jwt, ...extra }
}

function expectInvalidClient(response: ApiResponse<OAuthBody>, description?: RegExp): void {
  expect(response.status, response.text).toBe(401)
  expect(Object.keys(response.body).sort()).toEqual(['error', 'error_description'])
  expect(response.body.error).toBe('invalid_client')
  if (description) expect(response.body.error_description).toMatch(description)
}

/** openid-client's assertion times come from the real clock: shift them onto Herald's test clock. */
async function oidcConfig(h: TestHerald, account: CreatedAccount, clientId: string, key: SigningKey, options?: oidc.ModifyAssertionOptions) {
  const clockSkew = Math.floor((h.clock.now() - Date.now()) / 1000)
  return oidc.discovery(new URL(account.issuer), clientId, { [oidc.clockSkew]: clockSkew }, oidc.PrivateKeyJwt({ key: key.privateKey, kid: key.kid }, options), {
    execute: [oidc.allowInsecureRequests],
  })
}

/** A JWKS server on 127.0.0.1 that counts the requests it answers. */
interface JwksServer {
  origin: string
  hits: Map<string, number>
  documents: Map<string, { status: number; body: string }>
  close(): Promise<void>
}

async function startJwksServer(): Promise<JwksServer> {
  const hits = new Map<string, number>()
  const documents = new Map<string, { status: number; body: string }>()
  const server: Server = createServer((request, response) => {
    const path = request.url ?? '/'
    hits.set(path, (hits.get(path) ?? 0) + 1)
    const document = documents.get(path) ?? { status: 404, body: '{}' }
    response.writeHead(document.status, { 'content-type': 'application/json' }).end(document.body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    hits,
    documents,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

function warnings(h: TestHerald, clientId: string): Array<Record<string, unknown>> {
  return h.logs
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry.level === 40 && entry.clientId === clientId)
}

describe('client assertion policy', () => {
  it('caps the lifetime from now and from iat, and refuses an iat in the future', () => {
    const now = 1_000_000
    expect(assertionLifetimeProblem({ jti: 'a', exp: now + 60, iat: now }, now)).toBeUndefined()
    expect(assertionLifetimeProblem({ jti: 'a', exp: now + MAX_ASSERTION_LIFETIME_S }, now)).toBeUndefined()
    expect(assertionLifetimeProblem({ jti: 'a', exp: now + MAX_ASSERTION_LIFETIME_S + 1 }, now)).toMatch(/within 300 seconds/)
    expect(assertionLifetimeProblem({ jti: 'a', exp: now + 200, iat: now - 101 }, now)).toMatch(/exp - iat/)
    expect(assertionLifetimeProblem({ jti: 'a', exp: now + 60, iat: now + ASSERTION_CLOCK_TOLERANCE_S + 1 }, now)).toMatch(/future/)
    expect(assertionLifetimeProblem({ jti: 'a', exp: now + 60, iat: now + ASSERTION_CLOCK_TOLERANCE_S }, now)).toBeUndefined()
  })

  it('reads HERALD_WEBHOOK_ALLOW_HTTP as a boolean, false by default outside the development setup', () => {
    expect(loadConfig({ HERALD_SECRET_KEY: randomBytes(32).toString('base64') }).allowHttpOutbound).toBe(false)
    expect(loadConfig({ HERALD_WEBHOOK_ALLOW_HTTP: 'true' }).allowHttpOutbound).toBe(true)
    expect(loadConfig({ HERALD_WEBHOOK_ALLOW_HTTP: 'false' }).allowHttpOutbound).toBe(false)
    expect(() => loadConfig({ HERALD_WEBHOOK_ALLOW_HTTP: 'yes' })).toThrow(ConfigError)
    expect(() => loadConfig({ HERALD_WEBHOOK_ALLOW_HTTP: 'yes' })).toThrow(/HERALD_WEBHOOK_ALLOW_HTTP must be true or false/)
  })
})

describe('ClientKeySets', () => {
  it('fetches a plain-http jwks_uri only when HERALD_WEBHOOK_ALLOW_HTTP allows it, even if the client was registered before', async () => {
    const jwks = await startJwksServer()
    const agent = createGuardedAgent({ allowedCidrs: parseCidrList('127.0.0.0/8') })
    try {
      const key = await signingKey()
      jwks.documents.set('/jwks', { status: 200, body: JSON.stringify({ keys: [key.publicJwk] }) })
      const client = {
        id: 'cli_test',
        accountId: 'acct_test',
        metadata: { ...DEFAULT_METADATA, jwks_uri: `${jwks.origin}/jwks` },
      } as RegisteredClient
      const header = { alg: 'ES256', kid: key.kid }
      const log = createLogger('silent')
      const strict = new ClientKeySets(agent, new TestClock(), log)
      await expect(strict.keysOf(client)(header, { payload: '', signature: '' })).rejects.toBeInstanceOf(KeySetUnavailableError)
      expect(jwks.hits.size).toBe(0)
      const relaxed = new ClientKeySets(agent, new TestClock(), log, { allowHttp: true })
      await expect(relaxed.keysOf(client)(header, { payload: '', signature: '' })).resolves.toBeDefined()
      expect(jwks.hits.get('/jwks')).toBe(1)
    } finally {
      await agent.close()
      await jwks.close()
    }
  })
})

forEachDialect((dialect) => {
  describe('private_key_jwt with inline jwks', () => {
    const h = useHerald(dialect)
    let account: CreatedAccount
    let token: string

    beforeAll(async () => {
      account = await createAccount(h.current)
      token = await managementToken(account)
      expect((await api('POST', '/oauth/scopes', { name: 'reports:read' })).status).toBe(201)
    })

    const api = <T = Record<string, unknown>>(method: string, path: string, json?: unknown) =>
      call<T>(`${account.base}${path}`, method, { token, ...(json !== undefined && { json }) })

    async function register(jwks: JWK[], extra: Record<string, unknown> = {}): Promise<string> {
      const created = await api<ClientBody>('POST', '/oauth/clients', {
        grant_types: ['client_credentials'],
        token_endpoint_auth_method: 'private_key_jwt',
        scope: 'reports:read',
        jwks: { keys: jwks },
        ...extra,
      })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      expect(created.body).not.toHaveProperty('client_secret')
      return created.body.client_id
    }

    async function jtiRows(clientId: string): Promise<number> {
      const row = await h.current.herald.database.db
        .selectFrom('client_assertion_jtis')
        .select(({ fn }) => fn.countAll().as('n'))
        .where('account_id', '=', account.id)
        .where('client_id', '=', clientId)
        .executeTakeFirstOrThrow()
      return Number(row.n)
    }

    it('advertises private_key_jwt and its signing algorithms in discovery', async () => {
      const metadata = await call<Record<string, unknown>>(`${account.issuer}/.well-known/openid-configuration`, 'GET')
      expect(metadata.body.token_endpoint_auth_methods_supported).toContain('private_key_jwt')
      expect(metadata.body.token_endpoint_auth_signing_alg_values_supported).toEqual(['RS256', 'PS256', 'ES256', 'EdDSA'])
    })

    it('issues a token to a client whose assertion openid-client signed with its registered key', async () => {
      const key = await signingKey('ES256')
      const clientId = await register([key.publicJwk])
      const config = await oidcConfig(h.current, account, clientId, key)
      const tokens = await oidc.clientCredentialsGrant(config, { scope: 'reports:read' })
      const claims = decodeJwt(tokens.access_token)
      expect(claims.sub).toBe(clientId)
      expect(claims.client_id).toBe(clientId)
      expect(claims.scope).toBe('reports:read')
      expect(await jtiRows(clientId)).toBe(1)
    })

    it('authenticates the same way at introspection and revocation', async () => {
      const key = await signingKey('ES256')
      const clientId = await register([key.publicJwk])
      const config = await oidcConfig(h.current, account, clientId, key)
      const { access_token: accessToken } = await oidc.clientCredentialsGrant(config)
      expect(await oidc.tokenIntrospection(config, accessToken)).toMatchObject({ active: true, client_id: clientId })
      await oidc.tokenRevocation(config, accessToken)
      expect(await oidc.tokenIntrospection(config, accessToken)).toMatchObject({ active: false })
    })

    it('accepts each allowed algorithm, and several keys without a kid', async () => {
      const keys = await Promise.all(ASSERTION_SIGNING_ALGS.map((alg) => signingKey(alg)))
      const clientId = await register(keys.map((key) => key.publicJwk))
      for (const key of keys) {
        const response = await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key)))
        expect(response.status, `${key.alg}: ${response.text}`).toBe(200)
      }
      const unnamed = await Promise.all([signingKey('ES256'), signingKey('ES256')])
      const unnamedClient = await register(unnamed.map(({ publicJwk: { kid: _kid, ...jwk } }) => jwk))
      for (const key of unnamed) {
        const response = await tokenRequest(account, withAssertion(await assertion(h.current, account, unnamedClient, key, {}, { kid: undefined })))
        expect(response.status, response.text).toBe(200)
      }
    })

    it('refuses a replayed assertion and a reused jti, and accepts a fresh one', async () => {
      const key = await signingKey()
      const clientId = await register([key.publicJwk])
      const jwt = await assertion(h.current, account, clientId, key, { jti: 'once' })
      expect((await tokenRequest(account, withAssertion(jwt))).status).toBe(200)
      expectInvalidClient(await tokenRequest(account, withAssertion(jwt)), /already used/)
      h.current.clock.advanceSeconds(1)
      expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key, { jti: 'once' }))), /already used/)
      expect((await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key)))).status).toBe(200)
    })

    it('accepts the issuer or the token endpoint as aud, alone or in an array, and nothing else', async () => {
      const key = await signingKey()
      const clientId = await register([key.publicJwk])
      const tokenEndpoint = `${account.issuer}/oauth/tokens`
      for (const aud of [account.issuer, tokenEndpoint, ['https://rs.example', account.issuer], [tokenEndpoint]]) {
        const response = await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key, { aud })))
        expect(response.status, JSON.stringify(aud)).toBe(200)
      }
      const other = `${h.current.origin}/accounts/acct_00000000000000000000000000`
      for (const aud of [other, `${other}/oauth/tokens`, `${account.issuer}/oauth/introspect`, `${account.issuer}/`, ['https://rs.example'], h.current.origin]) {
        expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key, { aud }))), /aud/)
      }
      expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key, { aud: undefined }))), /no aud claim/)

      const wrongAud = await oidcConfig(h.current, account, clientId, key, {
        [oidc.modifyAssertion]: (_header, payload) => {
          payload.aud = other
        },
      })
      await expect(oidc.clientCredentialsGrant(wrongAud)).rejects.toMatchObject({ error: 'invalid_client', status: 401 })
    })

    it('requires iss and sub to be the client, and client_id, when given, to match', async () => {
      const key = await signingKey()
      const clientId = await register([key.publicJwk])
      const otherId = await register([(await signingKey()).publicJwk])
      expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key, { iss: otherId }))), /iss and sub/)
      expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key, { iss: undefined }))), /no iss claim/)
      expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key), { client_id: otherId })), /client_id/)
      const matching = await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key), { client_id: clientId }))
      expect(matching.status).toBe(200)
      // The assertion names the other client, whose keys don't include this one.
      expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, otherId, key))), /could not be verified/)
    })

    it('refuses an expired assertion once the clock passes exp and the tolerance', async () => {
      const key = await signingKey()
      const clientId = await register([key.publicJwk])
      const first = await assertion(h.current, account, clientId, key)
      const second = await assertion(h.current, account, clientId, key)
      expect((await tokenRequest(account, withAssertion(first))).status).toBe(200)
      h.current.clock.advanceSeconds(60 + ASSERTION_CLOCK_TOLERANCE_S)
      expectInvalidClient(await tokenRequest(account, withAssertion(second)), /expired/)
    })

    it('refuses an assertion valid for longer than the cap, from now or from iat', async () => {
      const key = await signingKey()
      const clientId = await register([key.publicJwk])
      const now = Math.floor(h.current.clock.now() / 1000)
      const atCap = await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key, { exp: now + MAX_ASSERTION_LIFETIME_S })))
      expect(atCap.status, atCap.text).toBe(200)
      for (const claims of [
        { exp: now + MAX_ASSERTION_LIFETIME_S + 1 },
        { exp: now + MAX_ASSERTION_LIFETIME_S + 1, iat: undefined },
        { exp: now + 250, iat: now - 100 },
        { exp: now + 3600, iat: now },
      ]) {
        expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key, claims))), /300 seconds/)
      }
    })

    it('requires exp and jti', async () => {
      const key = await signingKey()
      const clientId = await register([key.publicJwk])
      expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key, { exp: undefined }))), /no exp claim/)
      expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key, { jti: undefined }))), /no jti claim/)
      expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key, { jti: 42 }))), /jti/)
      expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key, { jti: 'x'.repeat(257) }))), /jti/)
      // Stored on SQLite, refused by PostgreSQL (and then a 400): the same invalid_client on both.
      expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key, { jti: 'a\u0000b' }))), /jti/)
      expect(await jtiRows(clientId)).toBe(0)
    })

    it('refuses alg none, HS256 and algorithms outside the allowed list', async () => {
      const key = await signingKey()
      const p384 = await signingKey('ES384')
      const clientId = await register([key.publicJwk, p384.publicJwk])
      const now = Math.floor(h.current.clock.now() / 1000)
      const claims = { iss: clientId, sub: clientId, aud: account.issuer, iat: now, exp: now + 60 }
      const unsecured = new UnsecuredJWT({ ...claims, jti: 'none' }).encode()
      expectInvalidClient(await tokenRequest(account, withAssertion(unsecured)), /signed with one of/)
      const hs256 = await new SignJWT({ ...claims, jti: 'hs256' }).setProtectedHeader({ alg: 'HS256', kid: key.kid }).sign(randomBytes(32))
      expectInvalidClient(await tokenRequest(account, withAssertion(hs256)), /signed with one of/)
      expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, p384))), /signed with one of/)
      expect((await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key)))).status).toBe(200)
    })

    it('refuses a key that is not in the client’s jwks, with or without a registered kid', async () => {
      const key = await signingKey()
      const clientId = await register([key.publicJwk])
      const impostor = { ...(await signingKey()), kid: key.kid }
      expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, impostor))), /could not be verified/)
      const stranger = await signingKey()
      expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, stranger))), /could not be verified/)
      expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, stranger, {}, { kid: undefined }))), /could not be verified/)
      expectInvalidClient(await tokenRequest(account, withAssertion('not.a.jwt')), /not a JWT/)
      expect(await jtiRows(clientId)).toBe(0)
    })

    it('refuses to mix methods, an incomplete or foreign assertion type, and the method a client did not register', async () => {
      const key = await signingKey()
      const clientId = await register([key.publicJwk])
      const jwt = await assertion(h.current, account, clientId, key)
      const mixedBasic = await tokenRequest(account, withAssertion(jwt), { authorization: basicAuth(clientId, 'whatever') })
      expect(mixedBasic.status).toBe(400)
      expect(mixedBasic.body.error).toBe('invalid_request')
      const mixedSecret = await tokenRequest(account, withAssertion(jwt, { client_secret: 'whatever' }))
      expect(mixedSecret.status).toBe(400)
      expect(mixedSecret.body.error).toBe('invalid_request')
      expect((await tokenRequest(account, { client_assertion: jwt })).body.error).toBe('invalid_request')
      expect((await tokenRequest(account, { client_assertion_type: CLIENT_ASSERTION_TYPE })).body.error).toBe('invalid_request')
      expectInvalidClient(await tokenRequest(account, { client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:saml2-bearer', client_assertion: jwt }), /client_assertion_type/)
      expectInvalidClient(await tokenRequest(account, { client_id: clientId, client_secret: 'guess' }))

      const secretClient = await api<ClientBody>('POST', '/oauth/clients', { grant_types: ['client_credentials'], jwks: { keys: [key.publicJwk] } })
      expect(secretClient.status).toBe(201)
      const asSecretClient = await assertion(h.current, account, secretClient.body.client_id, key)
      expectInvalidClient(await tokenRequest(account, withAssertion(asSecretClient)), /Client authentication failed/)
      // The untouched assertion still works: only the mixing was refused.
      expect((await tokenRequest(account, withAssertion(jwt))).status).toBe(200)
    })

    it('authenticates a management client, whose token then works on the management API', async () => {
      const key = await signingKey('PS256')
      const clientId = await register([key.publicJwk], { scope: 'herald:clients:read' })
      const config = await oidcConfig(h.current, account, clientId, key)
      const tokens = await oidc.clientCredentialsGrant(config)
      expect(decodeJwt(tokens.access_token).aud).toBe(account.issuer)
      const listed = await call(`${account.base}/oauth/clients?limit=1`, 'GET', { token: tokens.access_token })
      expect(listed.status).toBe(200)
      const refused = await call(`${account.base}/oauth/scopes`, 'POST', { token: tokens.access_token, json: { name: 'nope' } })
      expect(refused.status).toBe(403)
    })

    it('requires an https jwks_uri unless HERALD_WEBHOOK_ALLOW_HTTP is set', async () => {
      const refused = await api<{ errors: Array<{ pointer: string; message: string }> }>('POST', '/oauth/clients', {
        grant_types: ['client_credentials'],
        token_endpoint_auth_method: 'private_key_jwt',
        jwks_uri: 'http://keys.example/jwks.json',
      })
      expect(refused.status).toBe(400)
      expect(refused.body.errors).toContainEqual({ pointer: '/body/jwks_uri', message: 'must be an https URL' })
      const accepted = await api('POST', '/oauth/clients', {
        grant_types: ['client_credentials'],
        token_endpoint_auth_method: 'private_key_jwt',
        jwks_uri: 'https://keys.example/jwks.json',
      })
      expect(accepted.status).toBe(201)
    })

    it('lets a jti be used again once its assertion expired, and prunes expired jtis in batches', async () => {
      const key = await signingKey()
      const clientId = await register([key.publicJwk])
      const { herald } = h.current
      const prune = () => herald.pruners.assertionIds.runOnce()
      // Earlier tests moved the clock past their own assertions: start from a table without expired rows.
      while ((await prune()) > 0);
      expect((await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key, { jti: 'again' })))).status).toBe(200)
      expect(await prune()).toBe(0)
      expect(await jtiRows(clientId)).toBe(1)

      h.current.clock.advanceSeconds(60 + ASSERTION_CLOCK_TOLERANCE_S)
      expect((await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key, { jti: 'again' })))).status).toBe(200)
      expect(await jtiRows(clientId)).toBe(1)

      // 2,500 expired rows of another client take three bounded batches; the live row stays until it expires too.
      while ((await prune()) > 0);
      const expiredAt = h.current.clock.now() - 1
      const rows = Array.from({ length: 2500 }, (_, index) => ({ account_id: account.id, client_id: 'cli_bulk', jti: `bulk-${index}`, expires_at: expiredAt }))
      for (let start = 0; start < rows.length; start += 500) {
        await herald.database.db.insertInto('client_assertion_jtis').values(rows.slice(start, start + 500)).execute()
      }
      expect([await prune(), await prune(), await prune(), await prune()]).toEqual([1000, 1000, 500, 0])
      expect(await jtiRows('cli_bulk')).toBe(0)
      expect(await jtiRows(clientId)).toBe(1)

      h.current.clock.advanceSeconds(60 + ASSERTION_CLOCK_TOLERANCE_S)
      expect(await prune()).toBeGreaterThanOrEqual(1)
      expect(await jtiRows(clientId)).toBe(0)
    })
  })

  describe('private_key_jwt with a jwks_uri on an allow-listed address', () => {
    const h = useHerald(dialect, { env: { HERALD_WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', HERALD_WEBHOOK_ALLOW_HTTP: 'true' } })
    let account: CreatedAccount
    let token: string
    let jwks: JwksServer

    beforeAll(async () => {
      jwks = await startJwksServer()
      account = await createAccount(h.current)
      token = await managementToken(account)
    })
    afterAll(() => jwks?.close())

    async function register(jwksUri: string): Promise<string> {
      const created = await call<ClientBody>(`${account.base}/oauth/clients`, 'POST', {
        token,
        json: { grant_types: ['client_credentials'], token_endpoint_auth_method: 'private_key_jwt', jwks_uri: jwksUri },
      })
      expect(created.status, created.text).toBe(201)
      return created.body.client_id
    }

    const publish = (path: string, keys: SigningKey[]) => jwks.documents.set(path, { status: 200, body: JSON.stringify({ keys: keys.map((key) => key.publicJwk) }) })

    it('fetches the keys through the guarded agent, caches them, and refetches on a new kid after the cooldown', async () => {
      const first = await signingKey()
      publish('/rotating', [first])
      const clientId = await register(`${jwks.origin}/rotating`)
      const config = await oidcConfig(h.current, account, clientId, first)
      await oidc.clientCredentialsGrant(config)
      await oidc.clientCredentialsGrant(config)
      expect(jwks.hits.get('/rotating')).toBe(1)

      // The client rotates: a kid the cached set lacks is looked up again only after the cooldown.
      const second = await signingKey()
      publish('/rotating', [first, second])
      expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, second))), /could not be verified/)
      expect(jwks.hits.get('/rotating')).toBe(1)
      h.current.clock.advance(JWKS_REFETCH_COOLDOWN_MS)
      expect((await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, second)))).status).toBe(200)
      expect(jwks.hits.get('/rotating')).toBe(2)
      const unknown = await signingKey()
      expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, unknown))), /could not be verified/)
      expect(jwks.hits.get('/rotating')).toBe(2)

      // After the TTL the set is fetched again: a key the client withdrew stops working.
      publish('/rotating', [second])
      h.current.clock.advance(JWKS_CACHE_TTL_MS)
      expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, first))), /could not be verified/)
      expect(jwks.hits.get('/rotating')).toBe(3)
    })

    it('refuses with a generic invalid_client when the jwks_uri fails, logs why, and retries only after a short backoff', async () => {
      const key = await signingKey()
      const clientId = await register(`${jwks.origin}/missing`)
      const response = await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key)))
      expectInvalidClient(response, /^The client's JWK Set could not be retrieved$/)
      expect(response.text).not.toContain('127.0.0.1')
      expect(jwks.hits.get('/missing')).toBe(1)
      expect(warnings(h.current, clientId).map((entry) => entry.reason)).toEqual(['status 404'])

      expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key))))
      expect(jwks.hits.get('/missing')).toBe(1)
      publish('/missing', [key])
      h.current.clock.advance(JWKS_FAILURE_BACKOFF_MS)
      expect((await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key)))).status).toBe(200)
      expect(jwks.hits.get('/missing')).toBe(2)
    })

    it('refuses a JWK Set larger than the response cap, or one that is not a JWK Set', async () => {
      const key = await signingKey()
      jwks.documents.set('/huge', { status: 200, body: JSON.stringify({ keys: [key.publicJwk], padding: 'x'.repeat(70 * 1024) }) })
      jwks.documents.set('/garbage', { status: 200, body: '<html>hello</html>' })
      const huge = await register(`${jwks.origin}/huge`)
      const garbage = await register(`${jwks.origin}/garbage`)
      expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, huge, key))), /JWK Set could not be retrieved/)
      expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, garbage, key))), /JWK Set could not be retrieved/)
      expect(warnings(h.current, huge).map((entry) => entry.reason)).toEqual([expect.stringMatching(/larger than 65536 bytes/)])
      expect(warnings(h.current, garbage).map((entry) => entry.reason)).toEqual(['not JSON'])
    })

    it('still refuses the metadata address, which the allow-list does not cover', async () => {
      const key = await signingKey()
      const refused = await call(`${account.base}/oauth/clients`, 'POST', {
        token,
        json: { grant_types: ['client_credentials'], token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'http://169.254.169.254/latest/jwks' },
      })
      expectJwksUriRefused(refused, /link-local address \(169\.254\.169\.254\)/)
      const clientId = await storedWithJwksUri(h.current, account, 'http://169.254.169.254/latest/jwks')
      expectInvalidClient(await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key))), /JWK Set could not be retrieved/)
      expect(warnings(h.current, clientId).map((entry) => entry.reason)).toEqual(['blocked_address'])
    })
  })

  describe('private_key_jwt with a jwks_uri and no allow-list', () => {
    const h = useHerald(dialect, { env: { HERALD_WEBHOOK_ALLOW_HTTP: 'true' } })
    let jwks: JwksServer

    beforeAll(async () => {
      jwks = await startJwksServer()
    })
    afterAll(() => jwks?.close())

    it('never fetches from loopback or link-local addresses', async () => {
      const account = await createAccount(h.current)
      const token = await managementToken(account)
      const key = await signingKey()
      jwks.documents.set('/jwks', { status: 200, body: JSON.stringify({ keys: [key.publicJwk] }) })
      for (const uri of [`${jwks.origin}/jwks`, 'http://169.254.169.254/latest/jwks', `http://localhost:${new URL(jwks.origin).port}/jwks`]) {
        const refused = await call(`${account.base}/oauth/clients`, 'POST', {
          token,
          json: { grant_types: ['client_credentials'], token_endpoint_auth_method: 'private_key_jwt', jwks_uri: uri },
        })
        expectJwksUriRefused(refused, /must not point at an? (loopback|link-local) address/)
        // Registered before the check, or when its name resolved elsewhere: the fetch still vets the address.
        const clientId = await storedWithJwksUri(h.current, account, uri)
        const response = await tokenRequest(account, withAssertion(await assertion(h.current, account, clientId, key)))
        expectInvalidClient(response, /^The client's JWK Set could not be retrieved$/)
        expect(warnings(h.current, clientId).map((entry) => entry.reason), uri).toEqual(['blocked_address'])
      }
      expect(jwks.hits.size).toBe(0)
    })
  })
})

/** Registration refused the jwks_uri as an address Herald must not fetch from, and wrote nothing. */
function expectJwksUriRefused(answer: ApiResponse, reason: RegExp): void {
  expect(answer.status, answer.text).toBe(400)
  expect(answer.body).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/body/jwks_uri', message: expect.stringMatching(reason) }] })
}

/** A private_key_jwt client with this jwks_uri, stored as it is, past registration's checks. */
async function storedWithJwksUri(h: TestHerald, account: CreatedAccount, jwksUri: string): Promise<string> {
  const id = newId('cli', h.clock.now())
  const metadata = { ...DEFAULT_METADATA, grant_types: ['client_credentials' as const], response_types: [], token_endpoint_auth_method: 'private_key_jwt' as const, jwks_uri: jwksUri }
  await transaction(h.herald.database.db, (tx) => h.herald.clients.insert(tx, account.id, id, metadata, null, 'management'))
  return id
}
