import { decodeJwt } from 'jose'
import { beforeAll, describe, expect, it } from 'vitest'
import { type CreatedAccount, type TestHerald, forEachDialect, useHerald } from '../support/herald.js'
import { type ApiResponse, basicAuth, call, createAccount, managementToken } from '../support/http.js'

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
