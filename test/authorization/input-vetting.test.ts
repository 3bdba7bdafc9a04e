import { decodeJwt } from 'jose'
import { beforeAll, describe, expect, it } from 'vitest'
import { type CreatedAccount, type TestHerald, forEachDialect, useHerald } from '../support/herald.js'
import { type ApiResponse, basicAuth, call, createAccount, managementToken } from '../support/http.js'
import { Browser, CONSENT_URL, LOGIN_URL, authorizationUrl, challengeIn } from '../support/sign-in.js'

interface ClientBody {
  client_id: string
  client_secret: string
}

/** 400 validation_failed as problem+json, pointing at `pointer`. */
function expectRefused(answer: ApiResponse, pointer: string, message?: RegExp): void {
  expect(answer.status, answer.text).toBe(400)
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/)
  expect(answer.body).toMatchObject({ code: 'validation_failed', errors: [{ pointer, ...(message && { message: expect.stringMatching(message) }) }] })
}

/** Every row of the account in the tables a refused request could have written to. */
async function snapshot(h: TestHerald, accountId: string): Promise<unknown> {
  const { db } = h.herald.database
  return {
    clients: await db.selectFrom('clients').selectAll().where('account_id', '=', accountId).orderBy('id').execute(),
    scopes: await db.selectFrom('scopes').selectAll().where('account_id', '=', accountId).orderBy('name').execute(),
    settings: await db.selectFrom('account_settings').selectAll().where('account_id', '=', accountId).execute(),
    events: await db.selectFrom('events').select('id').where('account_id', '=', accountId).orderBy('id').execute(),
  }
}

const PRIVATE_KEY_JWT = { grant_types: ['client_credentials'], token_endpoint_auth_method: 'private_key_jwt' }

forEachDialect((dialect) => {
  const h = useHerald(dialect)

  describe('jwks_uri is vetted at registration like a webhook URL', () => {
    let account: CreatedAccount
    let token: string

    beforeAll(async () => {
      account = await createAccount(h.current, 'jwks-uri')
      token = await managementToken(account)
    })

    const refusedUris: Array<[string, RegExp]> = [
      ['https://127.0.0.1/jwks', /loopback address \(127\.0\.0\.1\)/],
      ['https://[::1]/jwks', /loopback address/],
      ['https://localhost/jwks', /loopback address \(localhost is/],
      ['https://0x7f.1/jwks', /loopback address/],
      ['https://10.1.2.3/jwks', /private address/],
      ['https://192.168.0.10/jwks', /private address/],
      ['https://169.254.169.254/latest/meta-data', /link-local address/],
      ['https://[fd00::1]/jwks', /unique-local address/],
      ['https://0.0.0.0/jwks', /unspecified address/],
      ['https://user@keys.example/jwks', /credentials/],
      ['https://keys.example/jw\tks', /control characters/],
    ]

    it('refuses private, loopback and metadata addresses at creation, and writes nothing', async () => {
      const before = await snapshot(h.current, account.id)
      for (const [uri, reason] of refusedUris) {
        expectRefused(await call(`${account.base}/oauth/clients`, 'POST', { token, json: { ...PRIVATE_KEY_JWT, jwks_uri: uri } }), '/body/jwks_uri', reason)
      }
      expect(await snapshot(h.current, account.id)).toEqual(before)
    })

    it('refuses them in a change too, and keeps the jwks_uri the client had', async () => {
      const created = await call<ClientBody>(`${account.base}/oauth/clients`, 'POST', { token, json: { ...PRIVATE_KEY_JWT, jwks_uri: 'https://93.184.215.14/jwks' } })
      expect(created.status, created.text).toBe(201)
      const before = await snapshot(h.current, account.id)
      for (const [uri, reason] of refusedUris) {
        expectRefused(await call(`${account.base}/oauth/clients/${created.body.client_id}`, 'PATCH', { token, json: { jwks_uri: uri } }), '/body/jwks_uri', reason)
      }
      expect(await snapshot(h.current, account.id)).toEqual(before)
    })

    it('accepts a public address, and a name that does not resolve yet', async () => {
      for (const uri of ['https://93.184.215.14/.well-known/jwks.json', 'https://keys.herald-test.invalid/jwks.json']) {
        const created = await call(`${account.base}/oauth/clients`, 'POST', { token, json: { ...PRIVATE_KEY_JWT, jwks_uri: uri } })
        expect(created.status, created.text).toBe(201)
        expect(created.body.jwks_uri).toBe(uri)
      }
    })
  })

  describe('jwks_uri on an address HERALD_WEBHOOK_ALLOWED_CIDRS allows', () => {
    const allowing = useHerald(dialect, { env: { HERALD_WEBHOOK_ALLOWED_CIDRS: '10.0.0.0/8' } })

    it('accepts it, and still refuses loopback, which the list does not cover', async () => {
      const account = await createAccount(allowing.current, 'jwks-uri-allowed')
      const token = await managementToken(account)
      const allowed = await call(`${account.base}/oauth/clients`, 'POST', { token, json: { ...PRIVATE_KEY_JWT, jwks_uri: 'https://10.1.2.3/jwks' } })
      expect(allowed.status, allowed.text).toBe(201)
      expectRefused(await call(`${account.base}/oauth/clients`, 'POST', { token, json: { ...PRIVATE_KEY_JWT, jwks_uri: 'https://127.0.0.1/jwks' } }), '/body/jwks_uri', /loopback/)
    })
  })

  describe('audiences are absolute URIs without a fragment or control characters', () => {
    let account: CreatedAccount
    let token: string

    beforeAll(async () => {
      account = await createAccount(h.current, 'audiences')
      token = await managementToken(account)
    })

    const badAudiences = [
      'not a uri',
      '/relative/path',
      'api.example.com',
      'https://api.example/orders#frag',
      'https://api.example/or\u0000ders',
      'https://api.example/or\tders',
      'https://api.example/orders\n',
      ' https://api.example/orders',
      'https://api.ex ample/',
      'https://api.example/\u007f',
      'https://api.example/\u0085',
    ]

    it('refuses a bad default_audience, pointing at it, and changes no setting', async () => {
      const before = await snapshot(h.current, account.id)
      for (const value of badAudiences) {
        expectRefused(await call(`${account.base}/settings`, 'PATCH', { token, json: { default_audience: value } }), '/body/default_audience')
      }
      expect(await snapshot(h.current, account.id)).toEqual(before)
    })

    it('refuses such an entry in a client audience list', async () => {
      const before = await snapshot(h.current, account.id)
      for (const value of badAudiences) {
        expectRefused(await call(`${account.base}/oauth/clients`, 'POST', { token, json: { grant_types: ['client_credentials'], audience: [value] } }), '/body/audience/0')
      }
      expect(await snapshot(h.current, account.id)).toEqual(before)
    })

    it('accepts an absolute URI, a URN included, and issues it as aud', async () => {
      const client = (await call<ClientBody>(`${account.base}/oauth/clients`, 'POST', { token, json: { grant_types: ['client_credentials'] } })).body
      for (const value of ['https://api.example/orders', 'urn:example:orders']) {
        const changed = await call(`${account.base}/settings`, 'PATCH', { token, json: { default_audience: value } })
        expect(changed.status, changed.text).toBe(200)
        const issued = await call<{ access_token: string }>(`${account.base}/oauth/tokens`, 'POST', {
          headers: { authorization: basicAuth(client.client_id, client.client_secret) },
          form: { grant_type: 'client_credentials' },
        })
        expect(decodeJwt(issued.body.access_token).aud).toBe(value)
      }
      expect((await call(`${account.base}/settings`, 'PATCH', { token, json: { default_audience: null } })).status).toBe(200)
    })
  })

  describe('redirect URIs: a port in 1–65535, no credentials, no wildcard, and a free port only for native apps', () => {
    let account: CreatedAccount
    let token: string

    beforeAll(async () => {
      account = await createAccount(h.current, 'redirect-uris')
      token = await managementToken(account)
      expect((await call(`${account.base}/settings`, 'PATCH', { token, json: { login_url: LOGIN_URL, consent_url: CONSENT_URL } })).status).toBe(200)
    })

    const CODE_CLIENT = { grant_types: ['authorization_code'], response_types: ['code'], scope: 'openid' }
    const NATIVE = { ...CODE_CLIENT, application_type: 'native', token_endpoint_auth_method: 'none' }

    async function register(metadata: Record<string, unknown>): Promise<ClientBody> {
      const created = await call<ClientBody>(`${account.base}/oauth/clients`, 'POST', { token, json: metadata })
      expect(created.status, created.text).toBe(201)
      return created.body
    }

    async function flowCount(): Promise<number> {
      const rows = await h.current.herald.database.db.selectFrom('authorization_flows').select('id').where('account_id', '=', account.id).execute()
      return rows.length
    }

    /** The request at authorize and pushed (RFC 9126), authenticated as the client is registered. */
    async function tryRedirect(client: ClientBody, redirectUri: string) {
      const url = authorizationUrl(account.base, client.client_id, { redirect_uri: redirectUri })
      const authorize = await new Browser().open(url)
      const form = Object.fromEntries(new URL(url).searchParams)
      const pushed = client.client_secret
        ? await call<{ error?: string }>(`${account.base}/oauth/par`, 'POST', { headers: { authorization: basicAuth(client.client_id, client.client_secret) }, form })
        : await call<{ error?: string }>(`${account.base}/oauth/par`, 'POST', { form })
      return { authorize, pushed }
    }

    const refusedUris: Array<[string, RegExp]> = [
      ['http://127.0.0.1:0/cb', /port between 1 and 65535/],
      ['http://127.0.0.1:65536/cb', /port between 1 and 65535/],
      ['http://127.0.0.1:99999/cb', /port between 1 and 65535/],
      ['https://rp.example:-1/cb', /port between 1 and 65535/],
      ['https://user:pass@rp.example/cb', /credentials/],
      ['http://user@127.0.0.1:8080/cb', /credentials/],
      ['https://*.rp.example/cb', /wildcard/],
      ['https://%2A.rp.example/cb', /wildcard/],
    ]

    it('refuses such a URI at registration and in a change, for web and native apps alike, pointing at it, and writes nothing', async () => {
      const client = await register({ ...CODE_CLIENT, redirect_uris: ['https://rp.example/ok'] })
      const before = await snapshot(h.current, account.id)
      for (const [uri, reason] of refusedUris) {
        for (const kind of [CODE_CLIENT, NATIVE]) {
          expectRefused(await call(`${account.base}/oauth/clients`, 'POST', { token, json: { ...kind, redirect_uris: ['https://rp.example/ok', uri] } }), '/body/redirect_uris/1', reason)
        }
        expectRefused(await call(`${account.base}/oauth/clients`, 'POST', { token, json: { grant_types: ['client_credentials'], post_logout_redirect_uris: [uri] } }), '/body/post_logout_redirect_uris/0', reason)
        expectRefused(await call(`${account.base}/oauth/clients/${client.client_id}`, 'PATCH', { token, json: { redirect_uris: [uri] } }), '/body/redirect_uris/0', reason)
      }
      expect(await snapshot(h.current, account.id)).toEqual(before)
    })

    it('refuses an out-of-range port at authorize and PAR with a 4xx, never at the redirect_uri, and writes no flow', async () => {
      const client = await register({ ...NATIVE, redirect_uris: ['http://127.0.0.1/cb', 'http://[::1]:9/cb'] })
      const flows = await flowCount()
      for (const uri of ['http://127.0.0.1:99999/cb', 'http://127.0.0.1:65536/cb', 'http://127.0.0.1:0/cb', 'http://[::1]:99999/cb']) {
        const { authorize, pushed } = await tryRedirect(client, uri)
        expect(authorize.location, uri).toBeNull()
        expect(authorize.status, uri).toBe(400)
        expect(authorize.text).toBe('invalid_request: redirect_uri must have a port between 1 and 65535\n')
        expect(pushed.status, uri).toBe(400)
        expect(pushed.body).toMatchObject({ error: 'invalid_request', error_description: 'redirect_uri must have a port between 1 and 65535' })
      }
      // With an error page, the browser goes there instead.
      expect((await call(`${account.base}/settings`, 'PATCH', { token, json: { error_url: 'https://login.example/error' } })).status).toBe(200)
      const { authorize } = await tryRedirect(client, 'http://127.0.0.1:99999/cb')
      expect(authorize.status).toBe(302)
      expect(authorize.location).toMatch(/^https:\/\/login\.example\/error\?error=invalid_request&error_description=redirect_uri\+must\+have\+a\+port/)
      expect((await call(`${account.base}/settings`, 'PATCH', { token, json: { error_url: null } })).status).toBe(200)
      expect(await flowCount()).toBe(flows)
    })

    it("matches a web app's loopback URI exactly, and lets a native app's loopback IP literal, but not localhost, take any port", async () => {
      const registered = ['http://127.0.0.1/cb', 'http://[::1]/cb', 'http://localhost:9/cb']
      const web = await register({ ...CODE_CLIENT, redirect_uris: registered })
      const native = await register({ ...NATIVE, redirect_uris: registered })
      const cases: Array<[string, ClientBody, string, boolean]> = [
        ['web, as registered', web, 'http://127.0.0.1/cb', true],
        ['web, localhost as registered', web, 'http://localhost:9/cb', true],
        ['web, another port (RFC 9700 §2.1)', web, 'http://127.0.0.1:53127/cb', false],
        ['web, another IPv6 loopback port', web, 'http://[::1]:53127/cb', false],
        ['native, another port', native, 'http://127.0.0.1:53127/cb', true],
        ['native, port 1', native, 'http://127.0.0.1:1/cb', true],
        ['native, port 65535', native, 'http://127.0.0.1:65535/cb', true],
        ['native, another IPv6 loopback port', native, 'http://[::1]:8080/cb', true],
        ['native, localhost as registered', native, 'http://localhost:9/cb', true],
        ['native, localhost on another port (RFC 8252 §8.3)', native, 'http://localhost:10/cb', false],
        ['native, another path', native, 'http://127.0.0.1:53127/cb/', false],
        ['native, the other loopback address', native, 'http://[::1]:53127/cb/', false],
      ]
      for (const [name, client, uri, matches] of cases) {
        const flows = await flowCount()
        const { authorize, pushed } = await tryRedirect(client, uri)
        if (matches) {
          challengeIn(authorize.location, 'login')
          expect(pushed.status, name).toBe(201)
          expect(await flowCount(), name).toBe(flows + 2)
        } else {
          expect([authorize.status, authorize.location, authorize.text], name).toEqual([400, null, 'invalid_request: redirect_uri is not registered for this client\n'])
          expect([pushed.status, pushed.body.error], name).toEqual([400, 'invalid_request'])
          expect(await flowCount(), name).toBe(flows)
        }
      }
    })
  })

  describe('a NUL character is refused alike on both dialects', () => {
    let account: CreatedAccount
    let token: string

    beforeAll(async () => {
      account = await createAccount(h.current, 'nul')
      token = await managementToken(account)
    })

    const bodies: Array<{ name: string; method: string; path: string; json: unknown; pointer: string }> = [
      { name: 'a client name', method: 'POST', path: '/oauth/clients', json: { client_name: 'a\u0000b', grant_types: ['client_credentials'] }, pointer: '/body/client_name' },
      { name: 'a client contact', method: 'POST', path: '/oauth/clients', json: { grant_types: ['client_credentials'], contacts: ['a@b.example', 'c\u0000@d.example'] }, pointer: '/body/contacts/1' },
      { name: 'a scope description', method: 'POST', path: '/oauth/scopes', json: { name: 'nul:test', description: '\u0000' }, pointer: '/body/description' },
      { name: 'a settings value', method: 'PATCH', path: '/settings', json: { default_audience: 'urn:a\u0000' }, pointer: '/body/default_audience' },
      { name: 'event data, deep inside', method: 'POST', path: '/webhooks/events', json: { type: 'nul.test', data: { items: [{ note: 'x\u0000' }] } }, pointer: '/body/data/items/0/note' },
      { name: 'an event data key', method: 'POST', path: '/webhooks/events', json: { type: 'nul.test', data: { 'a/b\u0000': 1 } }, pointer: '/body/data/a~1b\u0000' },
      { name: 'an unknown field', method: 'POST', path: '/oauth/scopes', json: { name: 'nul:other', extra: '\u0000' }, pointer: '/body/extra' },
    ]

    it('refuses one anywhere in a JSON body with 400 validation_failed pointing at it, and writes nothing', async () => {
      const before = await snapshot(h.current, account.id)
      for (const { name, method, path, json, pointer } of bodies) {
        const answer = await call(`${account.base}${path}`, method, { token, json })
        expect(answer.status, `${name}: ${answer.text}`).toBe(400)
        expectRefused(answer, pointer, /NUL/)
      }
      expect(await snapshot(h.current, account.id)).toEqual(before)
    })

    it('refuses one in a query parameter, pointing at it', async () => {
      for (const [path, pointer] of [
        ['/webhooks/deliveries?event_type=a%00', '/querystring/event_type'],
        ['/webhooks/events?type=%00', '/querystring/type'],
        ['/oauth/clients?limit=10&cursor=%00', '/querystring/cursor'],
      ] as const) {
        expectRefused(await call(`${account.base}${path}`, 'GET', { token }), pointer, /NUL/)
      }
    })
  })
})
