import { describe, expect, it } from 'vitest'
import { forEachDialect, useHerald } from '../support/herald.js'
import { basicAuth, call, createAccount, managementToken } from '../support/http.js'
import { Browser, LoginApp, authorizationUrl, challengeIn, prepareSignIn, redeemCode, signIn } from '../support/sign-in.js'

/** The management API over a subject's sessions and consents (`herald:sessions:write`). */
forEachDialect((dialect) => {
  const h = useHerald(dialect)

  async function signedIn() {
    const account = await createAccount(h.current)
    const rp = await prepareSignIn(account, { grant_types: ['authorization_code', 'refresh_token'], scope: 'openid offline_access' })
    const app = await LoginApp.of(account)
    const url = authorizationUrl(account.base, rp.clientId, { scope: 'openid offline_access' })
    const browser = new Browser()
    const callback = await signIn(browser, app, url, 'user-1', { remember: true })
    const tokens = await redeemCode<{ access_token: string; refresh_token: string }>(account.base, rp, callback)
    expect(tokens.status).toBe(200)
    return { account, rp, app, url, browser, tokens: tokens.body, token: await managementToken(account, 'herald:sessions:write') }
  }

  it('lists and ends a subject’s sessions, so the next login in that browser is not skipped', async () => {
    const { account, app, url, browser, token } = await signedIn()
    const sessions = await call<{ data: Array<{ id: string; subject: string; remembered: boolean }> }>(`${account.base}/oauth/sessions?subject=user-1`, 'GET', { token })
    expect(sessions.status).toBe(200)
    expect(sessions.body.data).toEqual([expect.objectContaining({ subject: 'user-1', remembered: true })])

    expect((await call(`${account.base}/oauth/sessions?subject=user-1`, 'DELETE', { token })).status).toBe(204)
    expect((await call<{ data: unknown[] }>(`${account.base}/oauth/sessions?subject=user-1`, 'GET', { token })).body.data).toEqual([])
    const started = await browser.open(url)
    expect((await app.loginRequest(challengeIn(started.location, 'login'))).body.skip).toBe(false)

    const events = await call<{ data: Array<{ type: string; data: { session_id?: string } }> }>(`${account.base}/webhooks/events?limit=50`, 'GET', { token: await managementToken(account) })
    expect(events.body.data.find((event) => event.type === 'oauth.session.ended')?.data.session_id).toBe(sessions.body.data[0]!.id)
  })

  it('lists and revokes consents; the grants made under them stop refreshing and introspect inactive', async () => {
    const { account, rp, tokens, token } = await signedIn()
    const consents = await call<{ data: Array<{ client_id: string; scope: string[] }> }>(`${account.base}/oauth/consents?subject=user-1`, 'GET', { token })
    expect(consents.body.data).toEqual([expect.objectContaining({ client_id: rp.clientId, scope: ['openid', 'offline_access'] })])

    expect((await call(`${account.base}/oauth/consents?subject=user-1&client_id=${rp.clientId}`, 'DELETE', { token })).status).toBe(204)
    expect((await call<{ data: unknown[] }>(`${account.base}/oauth/consents?subject=user-1`, 'GET', { token })).body.data).toEqual([])
    const refreshed = await call<{ error: string }>(`${account.base}/oauth/tokens`, 'POST', {
      headers: { authorization: basicAuth(rp.clientId, rp.clientSecret) },
      form: { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
    })
    expect(refreshed.body.error).toBe('invalid_grant')
    const introspected = await call<{ active: boolean }>(`${account.base}/oauth/introspect`, 'POST', { headers: { authorization: basicAuth(rp.clientId, rp.clientSecret) }, form: { token: tokens.access_token } })
    expect(introspected.body.active).toBe(false)
    const events = await call<{ data: Array<{ type: string }> }>(`${account.base}/webhooks/events?limit=50`, 'GET', { token: await managementToken(account) })
    expect(events.body.data.map((event) => event.type)).toEqual(expect.arrayContaining(['oauth.consent.revoked', 'oauth.grant.revoked']))
  })

  describe('across accounts', () => {
    it("doesn't let B list or end A's sessions and consents", async () => {
      const a = await signedIn()
      const b = await createAccount(h.current)
      const bToken = await managementToken(b, 'herald:sessions:write')
      expect((await call<{ data: unknown[] }>(`${b.base}/oauth/sessions?subject=user-1`, 'GET', { token: bToken })).body.data).toEqual([])
      expect((await call<{ data: unknown[] }>(`${b.base}/oauth/consents?subject=user-1`, 'GET', { token: bToken })).body.data).toEqual([])
      expect((await call(`${b.base}/oauth/sessions?subject=user-1`, 'DELETE', { token: bToken })).status).toBe(204)
      expect((await call(`${b.base}/oauth/consents?subject=user-1`, 'DELETE', { token: bToken })).status).toBe(204)
      expect((await call(`${a.account.base}/oauth/sessions?subject=user-1`, 'GET', { token: bToken })).status).toBe(401)
      expect((await call<{ data: unknown[] }>(`${a.account.base}/oauth/sessions?subject=user-1`, 'GET', { token: a.token })).body.data).toHaveLength(1)
      expect((await call<{ data: unknown[] }>(`${a.account.base}/oauth/consents?subject=user-1`, 'GET', { token: a.token })).body.data).toHaveLength(1)
    })

    it('needs herald:sessions:write, and a subject', async () => {
      const { account } = await signedIn()
      const login = await managementToken(account, 'herald:login')
      expect((await call(`${account.base}/oauth/sessions?subject=user-1`, 'GET', { token: login })).status).toBe(403)
      const token = await managementToken(account, 'herald:sessions:write')
      expect((await call(`${account.base}/oauth/sessions`, 'GET', { token })).status).toBe(400)
      expect((await call(`${account.base}/oauth/consents?subject=`, 'DELETE', { token })).status).toBe(400)
    })
  })
})
