import * as oidc from 'openid-client'
import { describe, expect, it } from 'vitest'
import { type CreatedAccount, forEachDialect, useHerald } from '../support/herald.js'
import { call, createAccount, managementToken } from '../support/http.js'
import { Browser, REDIRECT_URI, challengeIn, discoverClient, setupSignIn, signInThroughClient } from '../support/sign-in.js'
import { LOCAL_DELIVERY, useReceiver } from '../webhooks/support.js'

const LOGOUT_URL = 'https://login.example/logout'
const AFTER_LOGOUT = 'https://rp.example/signed-out'
const ACCOUNT_AFTER_LOGOUT = 'https://login.example/signed-out'

/** RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0), with and without the account's logout app. */
forEachDialect((dialect) => {
  const h = useHerald(dialect, LOCAL_DELIVERY)
  const receiver = useReceiver()

  /** An account (with `logoutUrl` as its logout app) and a relying party with a back-channel logout endpoint. */
  async function relyingParty(logoutUrl: string | null) {
    const { account, rp, app } = await setupSignIn(h.current, { post_logout_redirect_uris: [AFTER_LOGOUT], backchannel_logout_uri: receiver.current.url })
    if (logoutUrl !== null) expect((await call(`${account.base}/settings`, 'PATCH', { token: await managementToken(account), json: { logout_url: logoutUrl } })).status).toBe(200)
    const config = await discoverClient({ account, rp })
    /** `subject` signed in to the relying party, in a browser of their own. */
    const signInAs = async (subject: string) => {
      const { browser, url, redeem } = await signInThroughClient(config, app, subject)
      const tokens = await redeem()
      return { browser, tokens, url, sid: tokens.claims()!.sid as string }
    }
    return { account, rp, config, app, signInAs }
  }

  async function signedIn(logoutUrl: string | null) {
    const party = await relyingParty(logoutUrl)
    return { ...party, ...(await party.signInAs('user-1')) }
  }

  /** Whether an authorization request with prompt=none still finds the browser's session. */
  async function promptNone(user: { browser: Browser; url: URL }) {
    const answer = await user.browser.open(`${user.url.href}&prompt=none`)
    return new URL(answer.location!).searchParams.get('error')
  }

  /** The subject's live sessions, through the sessions API. */
  async function sessionsOf(account: CreatedAccount, subject: string): Promise<string[]> {
    const listed = await call<{ data: Array<{ id: string }> }>(`${account.base}/oauth/sessions?subject=${subject}`, 'GET', { token: await managementToken(account, 'herald:sessions:write') })
    expect(listed.status).toBe(200)
    return listed.body.data.map((session) => session.id)
  }

  /** Every session that ended, and every back-channel logout queued for one, in the account. */
  async function endings(account: CreatedAccount) {
    const token = await managementToken(account)
    const events = await call<{ data: Array<{ id: string; data: { session_id: string; subject: string } }> }>(`${account.base}/webhooks/events?type=oauth.session.ended&limit=50`, 'GET', { token })
    const deliveries = await call<{ data: Array<{ event_id: string }> }>(`${account.base}/webhooks/deliveries?event_type=oauth.session.ended`, 'GET', { token })
    expect([events.status, deliveries.status]).toEqual([200, 200])
    return { sessions: events.body.data.map((event) => event.data), logoutsQueued: deliveries.body.data.map((delivery) => events.body.data.find((event) => event.id === delivery.event_id)?.data.session_id) }
  }

  /** Opens the logout app's challenge the browser was sent with. */
  function logoutChallenge(location: string | null): string {
    expect(location).toMatch(`${LOGOUT_URL}?logout_challenge=`)
    return new URL(location!).searchParams.get('logout_challenge')!
  }

  async function setPostLogoutUrl(account: CreatedAccount, url: string | null) {
    return call<{ errors?: Array<{ pointer: string; message: string }> }>(`${account.base}/settings`, 'PATCH', { token: await managementToken(account), json: { post_logout_url: url } })
  }

  function logoutRequests(account: CreatedAccount) {
    const request = async (method: string, path: string) => call<{ redirect_to: string } & Record<string, unknown>>(`${account.base}/oauth/logout-requests/${path}`, method, { token: await managementToken(account, 'herald:login') })
    return { view: (challenge: string) => request('GET', challenge), answer: (challenge: string, verb: 'accept' | 'reject') => request('POST', `${challenge}/${verb}`) }
  }

  it('logs out through the logout app, ends the session, and returns to the client with its state', async () => {
    const s = await signedIn(LOGOUT_URL)
    expect(s.config.serverMetadata().end_session_endpoint).toBe(`${s.account.issuer}/oauth/logout`)
    const logoutUrl = oidc.buildEndSessionUrl(s.config, { id_token_hint: s.tokens.id_token!, post_logout_redirect_uri: AFTER_LOGOUT, state: 'bye' })
    const challenge = logoutChallenge((await s.browser.open(logoutUrl.href)).location)
    const requests = logoutRequests(s.account)
    expect((await requests.view(challenge)).body).toMatchObject({ subject: 'user-1', client_id: s.rp.clientId, session_id: s.sid, rp_initiated: true })
    const answer = await requests.answer(challenge, 'accept')
    expect(answer.status).toBe(200)
    const back = await s.browser.open(answer.body.redirect_to)
    expect(back.location).toBe(`${AFTER_LOGOUT}?state=bye`)
    expect(await promptNone(s)).toBe('login_required')
    expect((await s.browser.open(answer.body.redirect_to)).status).toBe(400)
    expect((await endings(s.account)).sessions).toEqual([{ session_id: s.sid, subject: 'user-1', reason: 'logout' }])
  })

  it('keeps the session when the logout app rejects', async () => {
    const s = await signedIn(LOGOUT_URL)
    const challenge = logoutChallenge((await s.browser.open(oidc.buildEndSessionUrl(s.config, { id_token_hint: s.tokens.id_token! }).href)).location)
    const answer = await logoutRequests(s.account).answer(challenge, 'reject')
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

  describe("after a logout that names no post_logout_redirect_uri (Hydra's urls.post_logout_redirect)", () => {
    it("sends the browser to the account's post_logout_url, whatever the logout app answered; the client's page still comes first", async () => {
      const s = await signedIn(LOGOUT_URL)
      expect((await setPostLogoutUrl(s.account, ACCOUNT_AFTER_LOGOUT)).status).toBe(200)
      const requests = logoutRequests(s.account)
      const logOut = async (params: Record<string, string>, verb: 'accept' | 'reject') => {
        const challenge = logoutChallenge((await s.browser.open(oidc.buildEndSessionUrl(s.config, { id_token_hint: s.tokens.id_token!, ...params }).href)).location)
        return s.browser.open((await requests.answer(challenge, verb)).body.redirect_to)
      }

      expect((await logOut({ post_logout_redirect_uri: AFTER_LOGOUT, state: 'stay' }, 'reject')).location).toBe(`${AFTER_LOGOUT}?state=stay`)
      expect((await logOut({ state: 'stay' }, 'reject')).location).toBe(ACCOUNT_AFTER_LOGOUT)
      expect(await promptNone(s)).not.toBe('login_required')

      const accepted = await logOut({}, 'accept')
      expect([accepted.status, accepted.location]).toEqual([302, ACCOUNT_AFTER_LOGOUT])
      expect(accepted.headers.getSetCookie()).toEqual([expect.stringMatching(/^herald_session=;/)])
      expect(await promptNone(s)).toBe('login_required')
    })

    it("goes there after a logout without a logout app too; unset, Herald answers a page of its own, not the request's text", async () => {
      const s = await signedIn(null)
      expect((await setPostLogoutUrl(s.account, ACCOUNT_AFTER_LOGOUT)).status).toBe(200)
      expect((await s.browser.open(`${s.account.base}/oauth/logout?id_token_hint=${s.tokens.id_token}&state=<b>`)).location).toBe(ACCOUNT_AFTER_LOGOUT)
      expect(await promptNone(s)).toBe('login_required')

      const again = await s.signInAs('user-1')
      expect((await setPostLogoutUrl(s.account, null)).status).toBe(200)
      const page = await again.browser.open(`${s.account.base}/oauth/logout?id_token_hint=${again.tokens.id_token}&state=<b>`)
      expect(page.status).toBe(200)
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
      expect(page.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'")
      expect(page.text).toContain('<title>Signed out</title></head><body><p>You are signed out.</p></body>')
      expect(page.text).not.toContain('<b>')
    })

    it('takes only an https URL of the account\'s app (http on loopback), like logout_url', async () => {
      const account = await createAccount(h.current)
      for (const [url, message] of [
        ['http://login.example/signed-out', 'must be an https URL (plain http only on 127.0.0.1, [::1] or localhost)'],
        ['https://login.example/signed-out#top', 'must not contain a fragment'],
        ['/signed-out', 'must be an absolute URL'],
      ] as const) {
        const refused = await setPostLogoutUrl(account, url)
        expect(refused.status, url).toBe(400)
        expect(refused.body.errors).toEqual([{ pointer: '/body/post_logout_url', message }])
      }
      expect((await setPostLogoutUrl(account, 'http://127.0.0.1:3000/signed-out')).status).toBe(200)
    })
  })

  it('refuses a post_logout_redirect_uri the client did not register, without redirecting', async () => {
    const s = await signedIn(null)
    for (const uri of ['https://evil.example/', `${AFTER_LOGOUT}/`, REDIRECT_URI]) {
      const answer = await s.browser.open(oidc.buildEndSessionUrl(s.config, { id_token_hint: s.tokens.id_token!, post_logout_redirect_uri: uri }).href)
      expect(answer.status).toBe(400)
      expect(answer.location).toBeNull()
    }
  })

  describe("an id_token_hint of another user's session (RP-Initiated Logout 1.0 §2, §6)", () => {
    it("ends nothing of the browser's session, even when expired; the browser's own hint ends it", async () => {
      const party = await relyingParty(null)
      const victim = await party.signInAs('victim')
      const attacker = await party.signInAs('attacker')
      const untouched = async () => {
        expect(await promptNone(victim)).not.toBe('login_required')
        expect(await sessionsOf(party.account, 'victim')).toEqual([victim.sid])
        expect(await sessionsOf(party.account, 'attacker')).toEqual([attacker.sid])
        expect(await endings(party.account)).toEqual({ sessions: [], logoutsQueued: [] })
      }

      for (const hint of ['valid', 'expired']) {
        if (hint === 'expired') h.current.clock.advance(2 * 3600_000)
        const refused = await victim.browser.open(`${party.account.base}/oauth/logout?id_token_hint=${attacker.tokens.id_token}`)
        expect(refused.status, hint).toBe(400)
        expect(refused.text).toMatch(/not of the browser's session/)
        expect(refused.headers.getSetCookie()).toEqual([])
        await untouched()
      }

      const own = await victim.browser.open(`${party.account.base}/oauth/logout?id_token_hint=${victim.tokens.id_token}`)
      expect(own.status).toBe(200)
      expect(await promptNone(victim)).toBe('login_required')
      expect(await sessionsOf(party.account, 'victim')).toEqual([])
      expect(await sessionsOf(party.account, 'attacker')).toEqual([attacker.sid])
      expect(await endings(party.account)).toEqual({ sessions: [{ session_id: victim.sid, subject: 'victim', reason: 'logout' }], logoutsQueued: [victim.sid] })
    })

    it('in a browser without a session, ends only the session the hint names', async () => {
      const party = await relyingParty(null)
      const victim = await party.signInAs('victim')
      const attacker = await party.signInAs('attacker')
      expect((await new Browser().open(`${party.account.base}/oauth/logout?id_token_hint=${attacker.tokens.id_token}`)).status).toBe(200)
      expect(await sessionsOf(party.account, 'attacker')).toEqual([])
      expect(await sessionsOf(party.account, 'victim')).toEqual([victim.sid])
      expect((await endings(party.account)).logoutsQueued).toEqual([attacker.sid])
    })

    it("shows the logout app only the hint's own session, and none of a browser that is another user's", async () => {
      const party = await relyingParty(LOGOUT_URL)
      const victim = await party.signInAs('victim')
      const attacker = await party.signInAs('attacker')
      const refused = await victim.browser.open(`${party.account.base}/oauth/logout?id_token_hint=${attacker.tokens.id_token}`)
      expect(refused.status).toBe(400)
      expect(refused.location).toBeNull()

      const challenge = logoutChallenge((await new Browser().open(`${party.account.base}/oauth/logout?id_token_hint=${attacker.tokens.id_token}`)).location)
      const requests = logoutRequests(party.account)
      expect((await requests.view(challenge)).body).toMatchObject({ subject: 'attacker', session_id: attacker.sid })
      expect((await requests.answer(challenge, 'accept')).status).toBe(200)
      expect(await sessionsOf(party.account, 'victim')).toEqual([victim.sid])
    })
  })

  describe("the logout app's answer, sent again", () => {
    it('gets the same redirect_to; the other answer, or one after the browser used it, is refused', async () => {
      const s = await signedIn(LOGOUT_URL)
      const challenge = logoutChallenge((await s.browser.open(oidc.buildEndSessionUrl(s.config, { id_token_hint: s.tokens.id_token! }).href)).location)
      const requests = logoutRequests(s.account)
      const first = await requests.answer(challenge, 'accept')
      expect(first.status).toBe(200)
      const again = await requests.answer(challenge, 'accept')
      expect(again.status).toBe(200)
      expect(again.body.redirect_to).toBe(first.body.redirect_to)
      expect((await requests.answer(challenge, 'reject')).status).toBe(409)
      expect((await requests.view(challenge)).status).toBe(409)

      const verifier = new URL(first.body.redirect_to).searchParams.get('logout_verifier')!
      const stored = await h.current.herald.database.db.selectFrom('logout_requests').selectAll().where('account_id', '=', s.account.id).execute()
      expect(stored).toHaveLength(1)
      expect(JSON.stringify(stored)).not.toContain(verifier)

      expect((await s.browser.open(first.body.redirect_to)).status).toBe(200)
      expect(await promptNone(s)).toBe('login_required')
      expect((await requests.answer(challenge, 'accept')).status).toBe(404)
    })

    it('gets the same redirect_to for a rejection too, and accepting after it is refused', async () => {
      const s = await signedIn(LOGOUT_URL)
      const challenge = logoutChallenge((await s.browser.open(oidc.buildEndSessionUrl(s.config, { id_token_hint: s.tokens.id_token! }).href)).location)
      const requests = logoutRequests(s.account)
      const first = await requests.answer(challenge, 'reject')
      const again = await requests.answer(challenge, 'reject')
      expect([first.status, again.status]).toEqual([200, 200])
      expect(again.body.redirect_to).toBe(first.body.redirect_to)
      expect((await requests.answer(challenge, 'accept')).status).toBe(409)
      expect((await s.browser.open(again.body.redirect_to)).text).toMatch(/still signed in/)
      expect(await promptNone(s)).not.toBe('login_required')
    })
  })
})
