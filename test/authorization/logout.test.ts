import * as oidc from 'openid-client'
import { expect, it } from 'vitest'
import { forEachDialect, useHerald } from '../support/herald.js'
import { call, createAccount, managementToken } from '../support/http.js'
import { Browser, LoginApp, REDIRECT_URI, challengeIn, prepareSignIn, signIn } from '../support/sign-in.js'

const LOGOUT_URL = 'https://login.example/logout'
const AFTER_LOGOUT = 'https://rp.example/signed-out'

/** RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0), with and without the account's logout app. */
forEachDialect((dialect) => {
  const h = useHerald(dialect)

  async function signedIn(logoutUrl: string | null) {
    const account = await createAccount(h.current)
    const rp = await prepareSignIn(account, { post_logout_redirect_uris: [AFTER_LOGOUT] })
    if (logoutUrl !== null) expect((await call(`${account.base}/settings`, 'PATCH', { token: await managementToken(account), json: { logout_url: logoutUrl } })).status).toBe(200)
    const config = await oidc.discovery(new URL(account.issuer), rp.clientId, undefined, oidc.ClientSecretBasic(rp.clientSecret), { execute: [oidc.allowInsecureRequests] })
    const app = await LoginApp.of(account)
    const verifier = oidc.randomPKCECodeVerifier()
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state: 's' })
    const browser = new Browser()
    const callback = await signIn(browser, app, url.href, 'user-1')
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 's' })
    return { account, rp, config, app, browser, tokens, url }
  }

  async function promptNone(s: Awaited<ReturnType<typeof signedIn>>) {
    const answer = await s.browser.open(`${s.url.href}&prompt=none`)
    return new URL(answer.location!).searchParams.get('error')
  }

  it('logs out through the logout app, ends the session, and returns to the client with its state', async () => {
    const s = await signedIn(LOGOUT_URL)
    expect(s.config.serverMetadata().end_session_endpoint).toBe(`${s.account.issuer}/oauth/logout`)
    const logoutUrl = oidc.buildEndSessionUrl(s.config, { id_token_hint: s.tokens.id_token!, post_logout_redirect_uri: AFTER_LOGOUT, state: 'bye' })
    const started = await s.browser.open(logoutUrl.href)
    expect(started.location).toMatch(`${LOGOUT_URL}?logout_challenge=`)
    const challenge = new URL(started.location!).searchParams.get('logout_challenge')!
    const token = await managementToken(s.account, 'herald:login')
    const request = await call<Record<string, unknown>>(`${s.account.base}/oauth/logout-requests/${challenge}`, 'GET', { token })
    expect(request.body).toMatchObject({ subject: 'user-1', client_id: s.rp.clientId, session_id: s.tokens.claims()?.sid, rp_initiated: true })
    const answer = await call<{ redirect_to: string }>(`${s.account.base}/oauth/logout-requests/${challenge}/accept`, 'POST', { token })
    expect((await call(`${s.account.base}/oauth/logout-requests/${challenge}/accept`, 'POST', { token })).status).toBe(409)
    const back = await s.browser.open(answer.body.redirect_to)
    expect(back.location).toBe(`${AFTER_LOGOUT}?state=bye`)
    expect(await promptNone(s)).toBe('login_required')
    expect((await s.browser.open(answer.body.redirect_to)).status).toBe(400)

    const events = await call<{ data: Array<{ type: string; data: { reason?: string } }> }>(`${s.account.base}/webhooks/events?limit=50`, 'GET', { token: await managementToken(s.account) })
    expect(events.body.data.find((event) => event.type === 'oauth.session.ended')?.data.reason).toBe('logout')
  })

  it('keeps the session when the logout app rejects', async () => {
    const s = await signedIn(LOGOUT_URL)
    const started = await s.browser.open(oidc.buildEndSessionUrl(s.config, { id_token_hint: s.tokens.id_token! }).href)
    const challenge = new URL(started.location!).searchParams.get('logout_challenge')!
    const token = await managementToken(s.account, 'herald:login')
    const answer = await call<{ redirect_to: string }>(`${s.account.base}/oauth/logout-requests/${challenge}/reject`, 'POST', { token })
    const back = await s.browser.open(answer.body.redirect_to)
    expect(back.status).toBe(200)
    expect(back.text).toMatch(/still signed in/)
    const started2 = await s.browser.open(s.url.href)
    expect((await s.app.loginRequest(challengeIn(started2.location, 'login'))).body.skip).toBe(true)
  })

  it('without a logout app, ends the session only for a valid id_token_hint', async () => {
    const s = await signedIn(null)
    expect((await s.browser.open(`${s.account.base}/oauth/logout`)).status).toBe(400)
    expect((await s.browser.open(`${s.account.base}/oauth/logout?id_token_hint=not.a.token`)).status).toBe(400)
    const other = await createAccount(h.current)
    expect((await s.browser.open(`${other.base}/oauth/logout?id_token_hint=${s.tokens.id_token}`)).status).toBe(400)
    expect(await promptNone(s)).not.toBe('login_required')

    // An expired hint is still a hint.
    h.current.clock.advance(2 * 3600_000)
    const done = await s.browser.open(`${s.account.base}/oauth/logout?id_token_hint=${s.tokens.id_token}`)
    expect(done.status).toBe(200)
    expect(done.text).toMatch(/signed out/)
    expect(await promptNone(s)).toBe('login_required')
  })

  it('refuses a post_logout_redirect_uri the client did not register, without redirecting', async () => {
    const s = await signedIn(null)
    for (const uri of ['https://evil.example/', `${AFTER_LOGOUT}/`, REDIRECT_URI]) {
      const answer = await s.browser.open(oidc.buildEndSessionUrl(s.config, { id_token_hint: s.tokens.id_token!, post_logout_redirect_uri: uri }).href)
      expect(answer.status).toBe(400)
      expect(answer.location).toBeNull()
    }
  })
})
