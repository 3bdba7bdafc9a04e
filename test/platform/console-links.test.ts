import { decodeJwt } from 'jose'
import { expect, it } from 'vitest'
import { OPERATOR_TOKEN, forEachDialect, useHerald } from '../support/herald.js'
import { type ApiResponse, call, createAccount } from '../support/http.js'

interface Link {
  url: string
  expires_at: string
  scope: string
}

interface ConsoleToken {
  access_token: string
  token_type: string
  expires_in: number
  scope: string
}

/** Single-use sign-in links to the console: made by the operator, exchanged once by the console for a short token. */
forEachDialect((dialect) => {
  const h = useHerald(dialect)

  async function link(accountId: string, json: Record<string, unknown> = {}): Promise<ApiResponse<Link>> {
    return call<Link>(`${h.current.origin}/accounts/${accountId}/console-links`, 'POST', { token: OPERATOR_TOKEN, json })
  }

  function codeOf(url: string): { account: string; code: string } {
    const fragment = new URLSearchParams(new URL(url).hash.slice(1))
    return { account: fragment.get('account')!, code: fragment.get('link')! }
  }

  async function exchange(base: string, code: unknown): Promise<ApiResponse<ConsoleToken>> {
    return call<ConsoleToken>(`${base}/console-links/exchange`, 'POST', { json: { code } })
  }

  it('gives, once, a short-lived management token with the link\'s scopes, and keeps only a digest of the code', async () => {
    const account = await createAccount(h.current)
    const made = await link(account.id, { scope: 'herald:webhooks:read herald:clients:read' })
    expect(made.status, made.text).toBe(201)
    expect(made.body.url.startsWith(`${h.current.origin}/console/#`)).toBe(true)
    expect(Date.parse(made.body.expires_at) - h.current.clock.now()).toBe(600_000)
    const { account: accountId, code } = codeOf(made.body.url)
    expect(accountId).toBe(account.id)

    const rows = await h.current.herald.database.db.selectFrom('console_links').selectAll().where('account_id', '=', account.id).execute()
    expect(rows).toHaveLength(1)
    expect(JSON.stringify(rows)).not.toContain(code)

    const token = await exchange(account.base, code)
    expect(token.status, token.text).toBe(200)
    expect(token.headers.get('cache-control')).toBe('no-store')
    expect(token.body).toMatchObject({ token_type: 'Bearer', scope: 'herald:webhooks:read herald:clients:read' })
    expect(token.body.expires_in).toBeLessThanOrEqual(900)
    expect(decodeJwt(token.body.access_token)).toMatchObject({ client_id: account.clientId, aud: account.issuer })

    const read = await call(`${account.base}/webhooks/deliveries`, 'GET', { token: token.body.access_token })
    expect(read.status).toBe(200)
    const write = await call(`${account.base}/webhooks/endpoints`, 'POST', { token: token.body.access_token, json: { url: 'https://example.com/hook' } })
    expect(write.status).toBe(403)

    const again = await exchange(account.base, code)
    expect(again.status).toBe(401)
    expect(again.body).toMatchObject({ code: 'invalid_token' })
  })

  it('grants the webhook scopes by default, and lapses unused after its lifetime', async () => {
    const account = await createAccount(h.current)
    const made = await link(account.id)
    expect(made.body.scope).toBe('herald:webhooks:read herald:webhooks:write herald:events:publish')
    h.current.clock.advance(600_000)
    expect((await exchange(account.base, codeOf(made.body.url).code)).status).toBe(401)

    const short = await link(account.id, { expires_in: 60 })
    h.current.clock.advance(59_000)
    expect((await exchange(account.base, codeOf(short.body.url).code)).status).toBe(200)
  })

  it("is worth nothing at another account's base", async () => {
    const a = await createAccount(h.current, 'a')
    const b = await createAccount(h.current, 'b')
    const { code } = codeOf((await link(a.id)).body.url)
    expect((await exchange(b.base, code)).status).toBe(401)
    // Refused elsewhere, it still works where it belongs.
    expect((await exchange(a.base, code)).status).toBe(200)
  })

  it('refuses bad requests with a clear 4xx, and writes nothing', async () => {
    const account = await createAccount(h.current)
    expect((await link(account.id, { scope: 'openid' })).status).toBe(400)
    expect((await link(account.id, { scope: 'herald:login herald:nope' })).status).toBe(400)
    expect((await link(account.id, { expires_in: 601 })).status).toBe(400)
    expect((await link(account.id, { extra: true })).status).toBe(400)
    expect((await link('acct_00000000000000000000000000')).status).toBe(404)
    const unauthenticated = await call(`${h.current.origin}/accounts/${account.id}/console-links`, 'POST', { json: {} })
    expect(unauthenticated.status).toBe(401)
    expect(await h.current.herald.database.db.selectFrom('console_links').select('id').where('account_id', '=', account.id).execute()).toEqual([])

    for (const code of ['', 'x'.repeat(129), 42, null]) expect((await exchange(account.base, code)).status).toBe(400)
    expect((await exchange(account.base, 'not-a-code')).status).toBe(401)
  })

  it('prunes lapsed links', async () => {
    const account = await createAccount(h.current)
    await link(account.id, { expires_in: 60 })
    await link(account.id)
    h.current.clock.advance(120_000)
    await h.current.herald.pruners.consoleLinks.runOnce()
    expect(await h.current.herald.database.db.selectFrom('console_links').select('id').where('account_id', '=', account.id).execute()).toHaveLength(1)
  })
})
