import { decodeJwt } from 'jose'
import * as oidc from 'openid-client'
import { beforeAll, describe, expect, it } from 'vitest'
import { type CreatedAccount, forEachDialect, useHerald } from '../support/herald.js'
import { basicAuth, call, createAccount, managementToken } from '../support/http.js'

interface ClientBody {
  client_id: string
  client_secret?: string
  scope: string
  management: boolean
  [field: string]: unknown
}

forEachDialect((dialect) => {
  const h = useHerald(dialect)
  let account: CreatedAccount
  let token: string

  beforeAll(async () => {
    account = await createAccount(h.current)
    token = await managementToken(account)
  })

  const api = <T = Record<string, unknown>>(method: string, path: string, json?: unknown) =>
    call<T>(`${account.base}${path}`, method, { token, ...(json !== undefined && { json }) })

  async function configFor(client: ClientBody, auth: oidc.ClientAuth): Promise<oidc.Configuration> {
    return oidc.discovery(new URL(account.issuer), client.client_id, undefined, auth, { execute: [oidc.allowInsecureRequests] })
  }

  describe('scopes, clients and the tokens they get', () => {
    it('issues exactly the configured scopes and lifetime, and refuses others with invalid_scope', async () => {
      expect((await api('POST', '/oauth/scopes', { name: 'orders:read', description: 'Read orders' })).status).toBe(201)
      expect((await api('POST', '/oauth/scopes', { name: 'orders:write', description: 'Change orders' })).status).toBe(201)
      const created = await api<ClientBody>('POST', '/oauth/clients', {
        client_name: 'billing',
        grant_types: ['client_credentials'],
        scope: 'orders:read',
        access_token_ttl: 600,
      })
      expect(created.status).toBe(201)
      expect(created.body.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(created.body.management).toBe(false)
      expect(created.body.source).toBe('management')

      const config = await configFor(created.body, oidc.ClientSecretBasic(created.body.client_secret as string))
      const tokens = await oidc.clientCredentialsGrant(config, { scope: 'orders:read' })
      const claims = decodeJwt(tokens.access_token)
      expect(claims.scope).toBe('orders:read')
      expect(claims.exp! - claims.iat!).toBe(600)
      expect(tokens.expires_in).toBe(600)
      expect(claims.aud).toBe(account.issuer)

      for (const scope of ['orders:write', 'orders:unknown', 'herald:keys:write']) {
        await expect(oidc.clientCredentialsGrant(config, { scope })).rejects.toMatchObject({ error: 'invalid_scope' })
      }
    })

    it('never shows a secret again after registration, and rotation replaces it at once', async () => {
      const created = await api<ClientBody>('POST', '/oauth/clients', { grant_types: ['client_credentials'], token_endpoint_auth_method: 'client_secret_post' })
      const read = await api<ClientBody>('GET', `/oauth/clients/${created.body.client_id}`)
      expect(read.status).toBe(200)
      expect(read.body).not.toHaveProperty('client_secret')

      const rotated = await api<ClientBody>('POST', `/oauth/clients/${created.body.client_id}/secret`)
      expect(rotated.status).toBe(200)
      expect(rotated.body.client_secret).not.toBe(created.body.client_secret)
      const tokenWith = (secret: string) =>
        call(`${account.base}/oauth/tokens`, 'POST', { form: { grant_type: 'client_credentials', client_id: created.body.client_id, client_secret: secret } })
      expect((await tokenWith(created.body.client_secret as string)).status).toBe(401)
      expect((await tokenWith(rotated.body.client_secret as string)).status).toBe(200)
    })

    it('stops issuing tokens to a deleted client', async () => {
      const created = await api<ClientBody>('POST', '/oauth/clients', { grant_types: ['client_credentials'] })
      const auth = basicAuth(created.body.client_id, created.body.client_secret as string)
      const request = () => call(`${account.base}/oauth/tokens`, 'POST', { headers: { authorization: auth }, form: { grant_type: 'client_credentials' } })
      expect((await request()).status).toBe(200)
      expect((await api('DELETE', `/oauth/clients/${created.body.client_id}`)).status).toBe(204)
      const refused = await request()
      expect(refused.status).toBe(401)
      expect(refused.body).toMatchObject({ error: 'invalid_client' })
      expect((await api('GET', `/oauth/clients/${created.body.client_id}`)).status).toBe(404)
    })

    it("says which client is the account's original management client, and keeps it: not deleted, its access fixed", async () => {
      const other = await api<ClientBody>('POST', '/oauth/clients', { grant_types: ['client_credentials'] })
      expect(other.body.admin).toBe(false)
      expect((await api<ClientBody>('GET', `/oauth/clients/${account.clientId}`)).body.admin).toBe(true)
      const listed = await api<{ data: ClientBody[] }>('GET', '/oauth/clients?limit=200')
      expect(listed.body.data.filter((client) => client.admin).map((client) => client.client_id)).toEqual([account.clientId])
      expect((await api('DELETE', `/oauth/clients/${account.clientId}`)).status).toBe(409)
      expect((await api('PATCH', `/oauth/clients/${account.clientId}`, { scope: 'herald:webhooks:read' })).status).toBe(409)
      const renamed = await api<ClientBody>('PATCH', `/oauth/clients/${account.clientId}`, { client_name: 'ops' })
      expect(renamed.body).toMatchObject({ client_name: 'ops', admin: true })
    })

    it('refuses to delete a scope a client still allows, and deletes it once none does', async () => {
      await api('POST', '/oauth/scopes', { name: 'reports:read' })
      const created = await api<ClientBody>('POST', '/oauth/clients', { grant_types: ['client_credentials'], scope: 'reports:read' })
      const refused = await api('DELETE', '/oauth/scopes/reports:read')
      expect(refused.status).toBe(409)
      expect(String(refused.body.detail)).toContain(created.body.client_id)

      expect((await api('PATCH', `/oauth/clients/${created.body.client_id}`, { scope: '' })).status).toBe(200)
      expect((await api('DELETE', '/oauth/scopes/reports:read')).status).toBe(204)
      expect((await api('GET', '/oauth/scopes/reports:read')).status).toBe(404)
    })

    it('lists the OIDC scopes like any other and refuses to delete them or to create herald: names', async () => {
      const listed = await api<{ data: Array<{ name: string; kind: string }> }>('GET', '/oauth/scopes?limit=200')
      expect(listed.body.data.filter((scope) => scope.kind === 'oidc').map((scope) => scope.name).sort()).toEqual(['email', 'offline_access', 'openid', 'profile'])
      expect((await api('DELETE', '/oauth/scopes/openid')).status).toBe(409)
      expect((await api('POST', '/oauth/scopes', { name: 'herald:anything' })).status).toBe(400)
      expect((await api('POST', '/oauth/scopes', { name: 'bad scope' })).status).toBe(400)
      expect((await api('POST', '/oauth/scopes', { name: 'orders:read' })).status).toBe(409)
    })

    it('refuses invalid metadata with a pointer to each bad field, and writes nothing', async () => {
      const countClients = async () =>
        Number((await h.current.herald.database.db.selectFrom('clients').select(({ fn }) => fn.countAll().as('n')).executeTakeFirstOrThrow()).n)
      const before = await countClients()
      const cases: Array<[unknown, string]> = [
        [{ redirect_uris: ['not a uri'], grant_types: ['authorization_code'], response_types: ['code'] }, '/body/redirect_uris/0'],
        [{ redirect_uris: ['https://app.example/cb#frag'], grant_types: ['authorization_code'], response_types: ['code'] }, '/body/redirect_uris/0'],
        [{ redirect_uris: ['http://app.example/cb'], grant_types: ['authorization_code'], response_types: ['code'] }, '/body/redirect_uris/0'],
        [{ redirect_uris: ['com.example.app:/cb'], grant_types: ['authorization_code'], response_types: ['code'] }, '/body/redirect_uris/0'],
        [{ grant_types: ['password'] }, '/body/grant_types/0'],
        [{ grant_types: ['implicit'] }, '/body/grant_types/0'],
        [{ token_endpoint_auth_method: 'client_secret_jwt' }, '/body/token_endpoint_auth_method'],
        [{ grant_types: ['client_credentials'], scope: 'nope:nope' }, '/body/scope'],
        [{ grant_types: ['client_credentials'], scope: 'a"b' }, '/body/scope'],
        [{ grant_types: ['client_credentials'], access_token_ttl: -5 }, '/body/access_token_ttl'],
        [{ grant_types: ['client_credentials'], surprise: true }, '/body/surprise'],
        [{ grant_types: ['authorization_code', 'client_credentials'], response_types: ['code'], redirect_uris: ['https://a.example/cb'], scope: 'herald:keys:write' }, '/body/grant_types'],
        [{ grant_types: ['client_credentials'], token_endpoint_auth_method: 'none' }, '/body/token_endpoint_auth_method'],
        [{ grant_types: ['client_credentials'], token_endpoint_auth_method: 'private_key_jwt' }, '/body/jwks'],
      ]
      for (const [body, pointer] of cases) {
        const response = await api<{ code: string; errors: Array<{ pointer: string }> }>('POST', '/oauth/clients', body)
        expect(response.status, JSON.stringify(body)).toBe(400)
        expect(response.body.code).toBe('validation_failed')
        expect(response.body.errors.map((error) => error.pointer), JSON.stringify(body)).toContain(pointer)
      }
      expect(await countClients()).toBe(before)
    })

    it('accepts loopback and private-use redirect URIs for native apps (RFC 8252)', async () => {
      const created = await api<ClientBody>('POST', '/oauth/clients', {
        application_type: 'native',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: ['com.example.app:/oauth/callback', 'http://127.0.0.1/callback', 'http://[::1]:8400/cb'],
      })
      expect(created.status).toBe(201)
      expect(created.body).not.toHaveProperty('client_secret')
    })

    it('applies settings to new tokens: the smaller of account and client lifetime wins', async () => {
      const patched = await api('PATCH', '/settings', { access_token_ttl: 300 })
      expect(patched.status).toBe(200)
      expect(patched.body.access_token_ttl).toBe(300)
      const created = await api<ClientBody>('POST', '/oauth/clients', { grant_types: ['client_credentials'], access_token_ttl: 900 })
      const issued = await call<{ access_token: string; expires_in: number }>(`${account.base}/oauth/tokens`, 'POST', {
        headers: { authorization: basicAuth(created.body.client_id, created.body.client_secret as string) },
        form: { grant_type: 'client_credentials' },
      })
      expect(issued.body.expires_in).toBe(300)
      const claims = decodeJwt(issued.body.access_token)
      expect(claims.exp! - claims.iat!).toBe(300)
      expect((await api('PATCH', '/settings', { refresh_token_idle_ttl: 10_000, refresh_token_absolute_ttl: 5_000 })).status).toBe(400)
      expect((await api('PATCH', '/settings', { access_token_ttl: 5 })).status).toBe(400)
      expect((await api('PATCH', '/settings', {})).status).toBe(400)
      expect((await api('PATCH', '/settings', { access_token_ttl: 3600 })).status).toBe(200)
    })

    it('records an event for each change, without secrets', async () => {
      const created = await api<ClientBody>('POST', '/oauth/clients', { grant_types: ['client_credentials'], client_name: 'evented' })
      await api('POST', `/oauth/clients/${created.body.client_id}/secret`)
      const rows = await h.current.herald.database.db.selectFrom('events').selectAll().where('account_id', '=', account.id).execute()
      const types = rows.map((row) => row.type)
      expect(types).toEqual(expect.arrayContaining(['oauth.client.created', 'oauth.client.secret_rotated', 'oauth.scope.created', 'oauth.settings.updated']))
      const created_event = rows.find((row) => row.type === 'oauth.client.created' && row.data.includes(created.body.client_id))
      expect(created_event).toBeDefined()
      expect(rows.map((row) => row.data).join('\n')).not.toContain(created.body.client_secret as string)
    })
  })
})
