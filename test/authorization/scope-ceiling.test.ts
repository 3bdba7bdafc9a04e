import { beforeAll, describe, expect, it } from 'vitest'
import { MANAGEMENT_SCOPES } from '../../src/platform/management-auth/scopes.js'
import { type CreatedAccount, forEachDialect, useHerald } from '../support/herald.js'
import { type ApiResponse, call, createAccount, managementToken } from '../support/http.js'

interface ClientBody {
  client_id: string
  client_secret?: string
  scope: string
  management: boolean
}

/** The management client's own token endpoint, for a client made in the test. */
async function tokenOf(account: CreatedAccount, client: ClientBody, scope?: string): Promise<string> {
  return managementToken({ ...account, clientId: client.client_id, clientSecret: client.client_secret as string }, scope)
}

/** 403 insufficient_scope as problem+json, naming every scope the token lacks and no other. */
function expectBeyondCeiling(answer: ApiResponse, missing: string[]): void {
  expect(answer.status, answer.text).toBe(403)
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/)
  expect(answer.body).toMatchObject({ code: 'insufficient_scope', status: 403 })
  const named = String(answer.body.detail).split(/[\s,;]+/).filter((word) => word.startsWith('herald:'))
  expect(named.sort()).toEqual([...missing].sort())
  expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer error="insufficient_scope"/)
}

forEachDialect((dialect) => {
  const h = useHerald(dialect)
  let account: CreatedAccount
  let admin: string
  /** A management client allowed only herald:clients:read and herald:clients:write, and its token. */
  let limited: ClientBody
  let limitedToken: string
  let standard: ClientBody

  beforeAll(async () => {
    account = await createAccount(h.current, 'ceiling')
    admin = await managementToken(account)
    limited = (await call<ClientBody>(`${account.base}/oauth/clients`, 'POST', {
      token: admin,
      json: { client_name: 'clients-only', grant_types: ['client_credentials'], scope: 'herald:clients:read herald:clients:write' },
    })).body
    limitedToken = await tokenOf(account, limited)
    await call(`${account.base}/oauth/scopes`, 'POST', { token: admin, json: { name: 'orders:read' } })
    standard = (await call<ClientBody>(`${account.base}/oauth/clients`, 'POST', { token: admin, json: { grant_types: ['client_credentials'], scope: 'orders:read' } })).body
  })

  const api = <T = Record<string, unknown>>(token: string, method: string, path: string, json?: unknown) =>
    call<T>(`${account.base}${path}`, method, { token, ...(json !== undefined && { json }) })

  /** What a refused attempt must leave untouched: every client row and every event of the account. */
  async function snapshot(): Promise<unknown> {
    const { db } = h.current.herald.database
    const clients = await db.selectFrom('clients').selectAll().where('account_id', '=', account.id).orderBy('id').execute()
    const scopes = await db.selectFrom('client_scopes').selectAll().where('account_id', '=', account.id).orderBy('client_id').orderBy('scope').execute()
    const events = await db.selectFrom('events').select('id').where('account_id', '=', account.id).orderBy('id').execute()
    return { clients, scopes, events }
  }

  describe('the scope ceiling: a management token gives only the herald: scopes it holds', () => {
    it("can't create a client with a herald: scope it does not hold, and writes nothing", async () => {
      const before = await snapshot()
      expectBeyondCeiling(await api(limitedToken, 'POST', '/oauth/clients', { grant_types: ['client_credentials'], scope: 'herald:keys:write' }), ['herald:keys:write'])
      expectBeyondCeiling(
        await api(limitedToken, 'POST', '/oauth/clients', { grant_types: ['client_credentials'], scope: 'herald:clients:write herald:keys:write herald:webhooks:write' }),
        ['herald:keys:write', 'herald:webhooks:write'],
      )
      expect(await snapshot()).toEqual(before)
    })

    it("can't patch itself to a herald: scope it does not hold", async () => {
      const before = await snapshot()
      expectBeyondCeiling(
        await api(limitedToken, 'PATCH', `/oauth/clients/${limited.client_id}`, { scope: 'herald:clients:read herald:clients:write herald:keys:write' }),
        ['herald:keys:write'],
      )
      expect(await snapshot()).toEqual(before)
      const self = await api<ClientBody>(admin, 'GET', `/oauth/clients/${limited.client_id}`)
      expect(self.body.scope).toBe('herald:clients:read herald:clients:write')
      await expect(tokenOf(account, limited, 'herald:keys:write')).rejects.toThrow(/invalid_scope/)
    })

    it("can't patch another client to a herald: scope it does not hold", async () => {
      const before = await snapshot()
      expectBeyondCeiling(await api(limitedToken, 'PATCH', `/oauth/clients/${standard.client_id}`, { scope: 'orders:read herald:keys:write' }), ['herald:keys:write'])
      expect(await snapshot()).toEqual(before)
    })

    it("can't change, rotate the secret of or delete a client that holds more than it does", async () => {
      const stronger = (await api<ClientBody>(admin, 'POST', '/oauth/clients', { grant_types: ['client_credentials'], scope: 'herald:clients:read herald:keys:write' })).body
      const before = await snapshot()
      // Each would hand the caller the stronger client's scopes: its secret, or credentials of the caller's choosing.
      expectBeyondCeiling(await api(limitedToken, 'POST', `/oauth/clients/${stronger.client_id}/secret`), ['herald:keys:write'])
      expectBeyondCeiling(await api(limitedToken, 'PATCH', `/oauth/clients/${stronger.client_id}`, { token_endpoint_auth_method: 'client_secret_post' }), ['herald:keys:write'])
      expectBeyondCeiling(await api(limitedToken, 'PATCH', `/oauth/clients/${stronger.client_id}`, { scope: 'herald:clients:read' }), ['herald:keys:write'])
      expectBeyondCeiling(await api(limitedToken, 'DELETE', `/oauth/clients/${stronger.client_id}`), ['herald:keys:write'])
      expectBeyondCeiling(await api(limitedToken, 'PATCH', `/oauth/clients/${account.clientId}`, { client_name: 'mine now' }), MANAGEMENT_SCOPES.filter((scope) => !scope.startsWith('herald:clients:')))
      expect(await snapshot()).toEqual(before)
      expect((await tokenOf(account, stronger, 'herald:keys:write')).length).toBeGreaterThan(0)
    })

    it('can give the herald: scopes it holds, to a new client, another client or itself', async () => {
      const created = await api<ClientBody>(limitedToken, 'POST', '/oauth/clients', { grant_types: ['client_credentials'], scope: 'herald:clients:read' })
      expect(created.status, created.text).toBe(201)
      expect(created.body).toMatchObject({ scope: 'herald:clients:read', management: true })
      expect((await api(await tokenOf(account, created.body), 'GET', '/oauth/clients')).status).toBe(200)

      const patched = await api<ClientBody>(limitedToken, 'PATCH', `/oauth/clients/${standard.client_id}`, { scope: 'herald:clients:read herald:clients:write' })
      expect(patched.status, patched.text).toBe(200)
      expect(patched.body).toMatchObject({ scope: 'herald:clients:read herald:clients:write', management: true })

      const narrowed = await api<ClientBody>(limitedToken, 'PATCH', `/oauth/clients/${limited.client_id}`, { scope: 'herald:clients:write herald:clients:read', client_name: 'still me' })
      expect(narrowed.status, narrowed.text).toBe(200)
      const rotated = await api<ClientBody>(limitedToken, 'POST', `/oauth/clients/${created.body.client_id}/secret`)
      expect(rotated.status, rotated.text).toBe(200)
      expect((await api(limitedToken, 'DELETE', `/oauth/clients/${created.body.client_id}`)).status).toBe(204)
    })

    it('narrows a token with its client: a scope taken from the client is neither usable nor givable with tokens issued before', async () => {
      const client = (await api<ClientBody>(admin, 'POST', '/oauth/clients', { grant_types: ['client_credentials'], scope: 'herald:clients:write herald:webhooks:read' })).body
      const issuedBefore = await tokenOf(account, client)
      expect((await api(issuedBefore, 'GET', '/webhooks/endpoints')).status).toBe(200)
      expect((await api(admin, 'PATCH', `/oauth/clients/${client.client_id}`, { scope: 'herald:clients:write' })).status).toBe(200)

      const refused = await api(issuedBefore, 'GET', '/webhooks/endpoints')
      expect(refused.status, refused.text).toBe(403)
      expect(refused.body).toMatchObject({ code: 'insufficient_scope' })
      const before = await snapshot()
      expectBeyondCeiling(await api(issuedBefore, 'POST', '/oauth/clients', { grant_types: ['client_credentials'], scope: 'herald:webhooks:read' }), ['herald:webhooks:read'])
      expect(await snapshot()).toEqual(before)
    })

    it("counts the presented token's scopes: the admin client's full token gives everything, a narrowed one only what it carries", async () => {
      const everything = await api<ClientBody>(admin, 'POST', '/oauth/clients', { grant_types: ['client_credentials'], scope: MANAGEMENT_SCOPES.join(' ') })
      expect(everything.status, everything.text).toBe(201)
      expect(everything.body.management).toBe(true)
      const full = await tokenOf(account, everything.body)
      expect((await api(full, 'POST', '/keys/rotate')).status).toBe(200)

      const narrowed = await managementToken(account, 'herald:clients:write')
      const before = await snapshot()
      expectBeyondCeiling(await api(narrowed, 'POST', '/oauth/clients', { grant_types: ['client_credentials'], scope: 'herald:clients:read' }), ['herald:clients:read'])
      expect(await snapshot()).toEqual(before)
    })
  })
})
