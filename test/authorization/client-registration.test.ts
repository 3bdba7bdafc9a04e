import * as oauth from 'oauth4webapi'
import * as oidc from 'openid-client'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { type CreatedAccount, forEachDialect, startHerald, useHerald } from '../support/herald.js'
import { call, createAccount, managementToken } from '../support/http.js'
import { whileRowLocked } from '../support/row-locks.js'

interface Registered {
  client_id: string
  client_secret?: string
  registration_access_token: string
  registration_client_uri: string
  scope: string
  grant_types: string[]
  source: string
  [field: string]: unknown
}

interface RegistrationToken {
  id: string
  token?: string
  uses: number
  max_uses: number
}

const WEB_APP = { client_name: 'A registered app', redirect_uris: ['https://app.example/callback'] }

forEachDialect((dialect) => {
  const h = useHerald(dialect)

  /** An account with its management token and a scope of its own, `orders:read`. */
  async function furnished(name: string): Promise<{ account: CreatedAccount; api: <T = Record<string, unknown>>(method: string, path: string, json?: unknown) => ReturnType<typeof call<T>> }> {
    const account = await createAccount(h.current, name)
    const token = await managementToken(account)
    const api = <T = Record<string, unknown>>(method: string, path: string, json?: unknown) => call<T>(`${account.base}${path}`, method, { token, ...(json !== undefined && { json }) })
    for (const scope of ['orders:read', 'orders:write']) expect((await api('POST', '/oauth/scopes', { name: scope })).status).toBe(201)
    return { account, api }
  }

  /** RFC 7591 registration by oauth4webapi, as an independent client would do it. */
  async function register(account: CreatedAccount, metadata: Record<string, unknown>, initialAccessToken?: string): Promise<Response> {
    const server = await oauth.processDiscoveryResponse(new URL(account.issuer), await oauth.discoveryRequest(new URL(account.issuer), { [oauth.allowInsecureRequests]: true }))
    if (!server.registration_endpoint) throw new Error('discovery lists no registration_endpoint')
    return oauth.dynamicClientRegistrationRequest(server, metadata as Partial<oauth.OmitSymbolProperties<oauth.Client>>, { [oauth.allowInsecureRequests]: true, ...(initialAccessToken !== undefined && { initialAccessToken }) })
  }

  const registerRaw = (account: CreatedAccount, json: unknown, token?: string) => call<Registered & { error?: string }>(`${account.base}/oauth/register`, 'POST', { json, ...(token !== undefined && { token }) })

  async function registrationToken(api: Awaited<ReturnType<typeof furnished>>['api'], body: Record<string, unknown> = {}): Promise<RegistrationToken & { token: string }> {
    const created = await api<RegistrationToken & { token: string }>('POST', '/oauth/registration-tokens', body)
    expect(created.status, created.text).toBe(201)
    return created.body
  }

  describe('registration modes', () => {
    let acme: Awaited<ReturnType<typeof furnished>>

    beforeAll(async () => {
      acme = await furnished('acme')
    })

    it('is disabled by default: discovery lists no registration_endpoint, and the endpoint answers 404', async () => {
      const config = await oidc.discovery(new URL(acme.account.issuer), 'nobody', undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] })
      expect(config.serverMetadata().registration_endpoint).toBeUndefined()
      expect((await registerRaw(acme.account, WEB_APP)).status).toBe(404)
    })

    it('with initial access tokens: a token registers as many clients as its uses, until it expires', async () => {
      const settings = await acme.api('PATCH', '/settings', { registration: 'initial_access_token', registration_scope: 'openid orders:read', registration_grant_types: ['authorization_code', 'refresh_token', 'client_credentials'] })
      expect(settings.status, settings.text).toBe(200)
      const config = await oidc.discovery(new URL(acme.account.issuer), 'nobody', undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] })
      expect(config.serverMetadata().registration_endpoint).toBe(`${acme.account.issuer}/oauth/register`)

      const anonymous = await registerRaw(acme.account, WEB_APP)
      expect(anonymous.status).toBe(401)
      expect(anonymous.body.error).toBe('invalid_token')
      expect(anonymous.headers.get('www-authenticate')).toBe('Bearer')

      const iat = await registrationToken(acme.api, { max_uses: 2, expires_in: 600 })
      expect(iat).toMatchObject({ max_uses: 2, uses: 0 })
      const listed = await acme.api<{ data: RegistrationToken[] }>('GET', '/oauth/registration-tokens')
      expect(listed.body.data.find((token) => token.id === iat.id)).not.toHaveProperty('token')

      const first = (await oauth.processDynamicClientRegistrationResponse(
        await register(acme.account, { client_name: 'machine', grant_types: ['client_credentials'], scope: 'orders:read' }, iat.token),
      )) as unknown as Registered
      expect(first).toMatchObject({ grant_types: ['client_credentials'], scope: 'orders:read', source: 'registration', client_secret_expires_at: 0 })
      expect(first.registration_client_uri).toBe(`${acme.account.issuer}/oauth/register/${first.client_id}`)
      // The client works: openid-client gets it a token by client_credentials.
      const client = await oidc.discovery(new URL(acme.account.issuer), first.client_id, undefined, oidc.ClientSecretBasic(first.client_secret!), { execute: [oidc.allowInsecureRequests] })
      expect((await oidc.clientCredentialsGrant(client)).scope).toBe('orders:read')
      // It is listed as registered, and its registration was an event.
      expect((await acme.api('GET', `/oauth/clients/${first.client_id}`)).body).toMatchObject({ source: 'registration', management: false })
      const events = await acme.api<{ data: Array<{ data: Record<string, unknown> }> }>('GET', '/webhooks/events?type=oauth.client.registered')
      expect(events.body.data[0]?.data).toMatchObject({ client_id: first.client_id, initial_access_token_id: iat.id })
      expect(events.body.data[0]?.data).not.toHaveProperty('client_secret')

      expect((await registerRaw(acme.account, WEB_APP, iat.token)).status).toBe(201)
      const usedUp = await registerRaw(acme.account, WEB_APP, iat.token)
      expect(usedUp.status).toBe(401)
      expect(usedUp.body.error).toBe('invalid_token')

      const brief = await registrationToken(acme.api, { expires_in: 60 })
      h.current.clock.advance(61_000)
      expect((await registerRaw(acme.account, WEB_APP, brief.token)).status).toBe(401)
    })

    it("refuses what goes beyond the policy or the token's ceiling with RFC 7591 errors, and ignores unknown metadata", async () => {
      const iat = await registrationToken(acme.api, { max_uses: 20, scope: 'openid', grant_types: ['authorization_code'] })
      const refusals: Array<[Record<string, unknown>, string]> = [
        [{ ...WEB_APP, scope: 'orders:read' }, 'invalid_client_metadata'],
        [{ ...WEB_APP, scope: 'herald:clients:write' }, 'invalid_client_metadata'],
        [{ grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
        [{ ...WEB_APP, skip_consent: true }, 'invalid_client_metadata'],
        [{ ...WEB_APP, audience: ['https://api.example'] }, 'invalid_client_metadata'],
        [{ ...WEB_APP, grant_types: 'authorization_code' }, 'invalid_client_metadata'],
        [{ ...WEB_APP, token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://127.0.0.1/keys' }, 'invalid_client_metadata'],
        [{ redirect_uris: ['http://app.example/callback'] }, 'invalid_redirect_uri'],
        [{ redirect_uris: ['com.example.app:/callback'], application_type: 'native' }, 'invalid_redirect_uri'],
        [{ redirect_uris: [] }, 'invalid_redirect_uri'],
      ]
      for (const [metadata, error] of refusals) {
        const refused = await registerRaw(acme.account, metadata, iat.token)
        expect(refused.status, JSON.stringify(metadata)).toBe(400)
        expect(refused.body.error, `${JSON.stringify(metadata)}: ${refused.text}`).toBe(error)
        expect(refused.headers.get('content-type')).toMatch(/^application\/json/)
      }
      // Nothing of a refused registration was written, its use of the token included.
      const tokens = await acme.api<{ data: RegistrationToken[] }>('GET', '/oauth/registration-tokens')
      expect(tokens.body.data.find((token) => token.id === iat.id)?.uses).toBe(0)

      const accepted = await registerRaw(acme.account, { ...WEB_APP, software_id: 'ignored', logo_uri: 'https://app.example/logo.png' }, iat.token)
      expect(accepted.status, accepted.text).toBe(201)
      expect(accepted.body).toMatchObject({ scope: 'openid', response_types: ['code'], logo_uri: 'https://app.example/logo.png' })
      expect(accepted.body).not.toHaveProperty('software_id')
    })
  })

  describe('open registration', () => {
    it('needs no token, never gives client_credentials, caps the clients, and limits each address per hour', async () => {
      const { account, api } = await furnished('open')
      expect((await api('PATCH', '/settings', { registration: 'open', registration_grant_types: ['authorization_code', 'client_credentials'], registration_rate_limit: 3, registration_max_clients: 2 })).status).toBe(200)
      const registered = (await oauth.processDynamicClientRegistrationResponse(await register(account, { ...WEB_APP, token_endpoint_auth_method: 'none' }))) as unknown as Registered
      expect(registered).not.toHaveProperty('client_secret')
      expect(registered.scope).toBe('openid profile email offline_access')

      const machine = await registerRaw(account, { grant_types: ['client_credentials'] })
      expect(machine.body.error).toBe('invalid_client_metadata')
      expect((await registerRaw(account, WEB_APP)).status).toBe(201)
      // The fourth attempt this hour from this address.
      const limited = await registerRaw(account, WEB_APP)
      expect(limited.status).toBe(429)
      expect(limited.body.error).toBe('too_many_requests')
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(3000)

      h.current.clock.advance(3600_000)
      const full = await registerRaw(account, WEB_APP)
      expect(full.status).toBe(400)
      expect(full.body.error).toBe('access_denied')
      const raised = await call(`${account.base}/settings`, 'PATCH', { token: await managementToken(account), json: { registration_max_clients: 3 } })
      expect(raised.status, raised.text).toBe(200)
      expect((await registerRaw(account, WEB_APP)).status).toBe(201)
    })
  })

  describe('the address a registration comes from', () => {
    const fromAddress = (account: CreatedAccount, address: string) =>
      call(`${account.base}/oauth/register`, 'POST', { json: WEB_APP, headers: { 'x-forwarded-for': address } })

    it("is X-Forwarded-For's when a trusted proxy (by default, one on this machine) sends it", async () => {
      const { account, api } = await furnished('proxied')
      expect((await api('PATCH', '/settings', { registration: 'open', registration_rate_limit: 1 })).status).toBe(200)
      expect((await fromAddress(account, '203.0.113.1')).status).toBe(201)
      expect((await fromAddress(account, '203.0.113.2')).status).toBe(201)
      expect((await fromAddress(account, '203.0.113.1')).status).toBe(429)
    })

    it("is the peer's own when it is not a trusted proxy: a made-up header dodges no limit", async () => {
      const direct = await startHerald(dialect, { env: { HERALD_TRUSTED_PROXIES: '' } })
      try {
        const account = await createAccount(direct, 'direct')
        const settings = await call(`${account.base}/settings`, 'PATCH', { token: await managementToken(account), json: { registration: 'open', registration_rate_limit: 1 } })
        expect(settings.status, settings.text).toBe(200)
        expect((await fromAddress(account, '203.0.113.1')).status).toBe(201)
        expect((await fromAddress(account, '203.0.113.2')).status).toBe(429)
      } finally {
        await direct.close()
      }
    })
  })

  describe('registrations at once', () => {
    it("spend a token's last use once, and keep to the account's cap, when they overlap", async () => {
      const { account, api } = await furnished('racing')
      expect((await api('PATCH', '/settings', { registration: 'initial_access_token', registration_max_clients: 2 })).status).toBe(200)
      // Every registration locks the account's settings row first: held here, both requests queue behind it.
      const lockSettings = 'select 1 from account_settings where account_id = $1 for update'
      const race = (token: string) =>
        whileRowLocked(h.current, lockSettings, [account.id], async (waiters) => {
          const racing = [registerRaw(account, WEB_APP, token), registerRaw(account, WEB_APP, token)]
          await waiters(2)
          return racing
        })
      const lastUse = await Promise.all(await race((await registrationToken(api, { max_uses: 1 })).token))
      expect(lastUse.map((response) => response.status).sort()).toEqual([201, 401])

      const beyondCap = await Promise.all(await race((await registrationToken(api, { max_uses: 5 })).token))
      expect(beyondCap.map((response) => response.body.error ?? response.status).sort()).toEqual([201, 'access_denied'])
      const registered = (await api<{ data: Array<{ source: string }> }>('GET', '/oauth/clients')).body.data.filter((client) => client.source === 'registration')
      expect(registered).toHaveLength(2)
    })
  })

  describe('the client configuration endpoint (RFC 7592)', () => {
    let acme: Awaited<ReturnType<typeof furnished>>
    let client: Registered

    beforeAll(async () => {
      acme = await furnished('managed')
      expect((await acme.api('PATCH', '/settings', { registration: 'open', registration_scope: 'openid orders:read orders:write' })).status).toBe(200)
      client = (await registerRaw(acme.account, { ...WEB_APP, scope: 'openid orders:read' })).body
    })

    const manage = (method: string, token: string, json?: unknown, uri = client.registration_client_uri) => call<Registered & { error?: string }>(uri, method, { token, ...(json !== undefined && { json }) })

    it('reads the registration with its access token only', async () => {
      const read = await manage('GET', client.registration_access_token)
      expect(read.status).toBe(200)
      expect(read.headers.get('cache-control')).toBe('no-store')
      expect(read.body).toMatchObject({ client_id: client.client_id, scope: 'openid orders:read', registration_client_uri: client.registration_client_uri })
      expect(read.body).not.toHaveProperty('client_secret')
      expect(read.body).not.toHaveProperty('registration_access_token')
      const wrong = await manage('GET', 'not-the-token')
      expect(wrong.status).toBe(401)
      expect(wrong.body.error).toBe('invalid_token')
      expect((await call(client.registration_client_uri, 'GET')).headers.get('www-authenticate')).toBe('Bearer')
    })

    it('replaces the registration as a whole, within the ceiling, naming the client and at most its current secret', async () => {
      const replaced = await manage('PUT', client.registration_access_token, { client_id: client.client_id, client_secret: client.client_secret, client_name: 'Renamed', redirect_uris: ['https://app.example/other'], scope: 'orders:write' })
      expect(replaced.status, replaced.text).toBe(200)
      expect(replaced.body).toMatchObject({ client_name: 'Renamed', redirect_uris: ['https://app.example/other'], scope: 'orders:write', logo_uri: null })
      const refusals: Array<[Record<string, unknown>, string]> = [
        [{ client_id: 'cli_someone_else', ...WEB_APP }, 'invalid_client_metadata'],
        [{ client_id: client.client_id, client_secret: 'a-secret-of-my-choosing', ...WEB_APP }, 'invalid_client_metadata'],
        [{ client_id: client.client_id, ...WEB_APP, scope: 'herald:clients:read' }, 'invalid_client_metadata'],
        [{ client_id: client.client_id, ...WEB_APP, grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
        [{ client_id: client.client_id, redirect_uris: ['https://app.example/#fragment'] }, 'invalid_redirect_uri'],
        [{ ...WEB_APP }, 'invalid_client_metadata'],
      ]
      for (const [body, error] of refusals) {
        const refused = await manage('PUT', client.registration_access_token, body)
        expect(refused.status, JSON.stringify(body)).toBe(400)
        expect(refused.body.error, refused.text).toBe(error)
      }
      expect((await manage('GET', client.registration_access_token)).body.client_name).toBe('Renamed')
      expect((await manage('PUT', 'not-the-token', { client_id: client.client_id, ...WEB_APP })).status).toBe(401)
    })

    it('deletes the client, after which its token and registration are gone', async () => {
      expect((await manage('DELETE', 'not-the-token')).status).toBe(401)
      const deleted = await manage('DELETE', client.registration_access_token)
      expect(deleted.status).toBe(204)
      expect((await manage('GET', client.registration_access_token)).status).toBe(401)
      expect((await acme.api('GET', `/oauth/clients/${client.client_id}`)).status).toBe(404)
    })
  })

  describe('tenancy', () => {
    it("refuses another account's initial access tokens, registration access tokens and token ids", async () => {
      const a = await furnished('tenant-a')
      const b = await furnished('tenant-b')
      for (const { api } of [a, b]) expect((await api('PATCH', '/settings', { registration: 'initial_access_token' })).status).toBe(200)
      const bToken = await registrationToken(b.api, { max_uses: 5 })
      const bClient = (await registerRaw(b.account, WEB_APP, bToken.token)).body
      const aToken = await registrationToken(a.api)

      expect((await registerRaw(a.account, WEB_APP, bToken.token)).status).toBe(401)
      const underA = `${a.account.base}/oauth/register/${bClient.client_id}`
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const response = await call<{ error: string }>(underA, method, { token: bClient.registration_access_token, ...(method === 'PUT' && { json: { client_id: bClient.client_id, ...WEB_APP } }) })
        expect(response.status, method).toBe(401)
        expect(response.body.error).toBe('invalid_token')
      }
      expect((await a.api('DELETE', `/oauth/registration-tokens/${bToken.id}`)).status).toBe(404)
      expect((await a.api('DELETE', `/oauth/registration-tokens/${aToken.id}`)).status).toBe(204)
      expect((await call(bClient.registration_client_uri, 'GET', { token: bClient.registration_access_token })).status).toBe(200)
      expect((await registerRaw(b.account, WEB_APP, bToken.token)).status).toBe(201)
    })
  })

  describe('garbage', () => {
    it('answers 4xx to malformed requests at every new route, and writes nothing', async () => {
      const { account, api } = await furnished('garbage')
      expect((await api('PATCH', '/settings', { registration: 'open', registration_rate_limit: 1000 })).status).toBe(200)
      const client = (await registerRaw(account, WEB_APP)).body
      const clientsBefore = (await api<{ data: unknown[] }>('GET', '/oauth/clients')).body.data.length
      const bodies = ['', '{', '[]', '"text"', 'null', '{"redirect_uris": "x"}', '{"client_name": 5}', JSON.stringify({ ...WEB_APP, jwks: { keys: [] } }), `{"client_name": "${'x'.repeat(70_000)}"}`, '{"client_name": "\\u0000"}']
      const targets: Array<[string, string, string | undefined]> = [
        ['POST', `${account.base}/oauth/register`, undefined],
        ['PUT', client.registration_client_uri, client.registration_access_token],
      ]
      for (const [method, url, token] of targets) {
        for (const body of bodies) {
          for (const contentType of ['application/json', 'text/plain', 'application/x-www-form-urlencoded']) {
            const response = await call(url, method, { body, headers: { 'content-type': contentType }, ...(token !== undefined && { token }) })
            expect(response.status, `${method} ${url} ${contentType} ${body.slice(0, 40)}: ${response.text}`).toBeGreaterThanOrEqual(400)
            expect(response.status, `${method} ${body.slice(0, 40)}`).toBeLessThan(500)
          }
        }
      }
      for (const id of ['x', 'cli_', `cli_${'9'.repeat(60)}`, '%00', '..']) {
        expect((await call(`${account.base}/oauth/register/${id}`, 'GET', { token: client.registration_access_token })).status).toBeLessThan(500)
        expect((await api('DELETE', `/oauth/registration-tokens/${id}`)).status).toBeGreaterThanOrEqual(400)
      }
      for (const body of [[], { max_uses: 0 }, { expires_in: 'soon' }, { scope: 'herald:login' }, { scope: 'a\u0000b' }, { grant_types: ['implicit'] }, { unknown: true }]) {
        const refused = await api('POST', '/oauth/registration-tokens', body)
        expect(refused.status, JSON.stringify(body)).toBe(400)
        expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/)
      }
      expect((await api<{ data: unknown[] }>('GET', '/oauth/registration-tokens')).body.data).toEqual([])
      expect((await api<{ data: unknown[] }>('GET', '/oauth/clients')).body.data.length).toBe(clientsBefore)
      expect((await call(client.registration_client_uri, 'GET', { token: client.registration_access_token })).body).toMatchObject({ client_name: WEB_APP.client_name })
    })
  })

  describe('pruning', () => {
    it('deletes registered clients unused for longer than the account allows, and keeps those that got tokens', async () => {
      const { account, api } = await furnished('pruned')
      expect((await api('PATCH', '/settings', { registration: 'initial_access_token', registration_prune_after_days: 1, registration_grant_types: ['client_credentials'], registration_scope: 'orders:read' })).status).toBe(200)
      const iat = await registrationToken(api, { max_uses: 2 })
      const machine = { grant_types: ['client_credentials'], scope: 'orders:read' }
      const idle = (await registerRaw(account, machine, iat.token)).body
      const busy = (await registerRaw(account, machine, iat.token)).body
      const { herald, clock } = h.current
      clock.advance(36 * 3600_000)
      const config = await oidc.discovery(new URL(account.issuer), busy.client_id, undefined, oidc.ClientSecretBasic(busy.client_secret!), { execute: [oidc.allowInsecureRequests] })
      await oidc.clientCredentialsGrant(config)
      const lastUse = () =>
        herald.database.db.selectFrom('client_registrations').select('last_used_at').where('account_id', '=', account.id).where('client_id', '=', busy.client_id).executeTakeFirstOrThrow()
      await vi.waitFor(async () => expect((await lastUse()).last_used_at).toBe(clock.now()))
      clock.advance(12 * 3600_000)

      expect(await herald.pruners.registeredClients.runOnce()).toBe(1)
      const token = await managementToken(account)
      const later = <T>(path: string) => call<T>(`${account.base}${path}`, 'GET', { token })
      expect((await later(`/oauth/clients/${idle.client_id}`)).status).toBe(404)
      expect((await later(`/oauth/clients/${busy.client_id}`)).status).toBe(200)
      const deleted = await later<{ data: Array<{ data: { client_id: string } }> }>('/webhooks/events?type=oauth.client.deleted')
      expect(deleted.body.data.map((event) => event.data.client_id)).toEqual([idle.client_id])
    })
  })
})
