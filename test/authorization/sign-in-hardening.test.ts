import { describe, expect, it } from 'vitest'
import { secretDigest } from '../../src/authorization/sign-in/flow-store.js'
import { OPERATOR_TOKEN, forEachDialect, useHerald } from '../support/herald.js'
import { call, managementToken } from '../support/http.js'
import { whileFlowLocked } from '../support/row-locks.js'
import { Browser, REDIRECT_URI, type SignInSetup, authorizationUrl, challengeIn, prepareSignIn, redeemCode, setupSignIn, signIn } from '../support/sign-in.js'

/** Sign-ins under way don't outlive what they stand on, re-sent answers are answered, bad set-ups write nothing. */
forEachDialect((dialect) => {
  const h = useHerald(dialect)

  const setup = (client: Record<string, unknown> = {}) => setupSignIn(h.current, client)

  /** `s.browser` signed in as user-1 with a remembered session, through a first-party client; answers its ID token. */
  async function rememberedSession(s: SignInSetup, login: Record<string, unknown> = {}): Promise<string> {
    const portal = await prepareSignIn(s.account, { skip_consent: true })
    const challenge = challengeIn((await s.browser.open(authorizationUrl(s.account.base, portal.clientId))).location, 'login')
    const callback = await s.browser.open(await s.app.accept('login', challenge, { subject: 'user-1', remember: true, ...login }))
    const tokens = await redeemCode<{ id_token: string }>(s.account.base, portal, new URL(callback.location!))
    expect(tokens.status, tokens.text).toBe(200)
    return tokens.body.id_token
  }

  /** A new sign-in in the browser, whose login the live session lets the app skip; answers its login challenge. */
  async function skippedLogin(s: SignInSetup, params: Record<string, string> = {}): Promise<string> {
    const challenge = challengeIn((await s.browser.open(authorizationUrl(s.account.base, s.rp.clientId, params))).location, 'login')
    expect((await s.app.loginRequest(challenge)).body).toMatchObject({ skip: true, subject: 'user-1' })
    return challenge
  }

  async function management(s: SignInSetup, path: string, method: string, scope?: string) {
    return call(`${s.account.base}${path}`, method, { token: await managementToken(s.account, scope) })
  }

  async function rows(table: 'authorization_flows' | 'browser_sessions', accountId: string): Promise<number> {
    const db = h.current.herald.database.db
    const row = await db.selectFrom(table).select(({ fn }) => fn.countAll().as('n')).where('account_id', '=', accountId).executeTakeFirstOrThrow()
    return Number(row.n)
  }

  /** The id of the flow whose code the callback carries. */
  async function flowOfCode(s: SignInSetup, callback: URL): Promise<string> {
    const db = h.current.herald.database.db
    const row = await db.selectFrom('authorization_flows').select('id').where('account_id', '=', s.account.id).where('handle', '=', secretDigest(callback.searchParams.get('code')!)).executeTakeFirstOrThrow()
    return row.id
  }

  function expectClientError(location: string | null, error: string): URL {
    const url = new URL(location!)
    expect(`${url.origin}${url.pathname}`).toBe(REDIRECT_URI)
    expect(url.searchParams.get('error')).toBe(error)
    expect(url.searchParams.has('code')).toBe(false)
    return url
  }

  describe('ending a session closes the sign-ins under way on it', () => {
    it('refuses a skipped login started before DELETE /oauth/sessions, to the app and then to the browser', async () => {
      const s = await setup({ skip_consent: true })
      await rememberedSession(s)
      const waiting = await skippedLogin(s)
      const answered = await skippedLogin(s)
      const verifierUrl = await s.app.accept('login', answered, { subject: 'user-1' })

      expect((await management(s, '/oauth/sessions?subject=user-1', 'DELETE', 'herald:sessions:write')).status).toBe(204)
      expect((await s.app.loginRequest(waiting)).status).toBe(404)
      expect((await s.app.answer('login', waiting, 'accept', { subject: 'user-1' })).status).toBe(404)
      // The app had accepted the other before the session ended: its browser gets an error for the client, no code.
      const back = await s.browser.open(verifierUrl)
      expectClientError(back.location, 'login_required')
      expect(back.headers.getSetCookie().some((cookie) => cookie.startsWith('herald_session=') && !cookie.includes('Max-Age=0'))).toBe(false)
    })

    it('closes them when the session ends through a logout too', async () => {
      const s = await setup({ skip_consent: true })
      const idToken = await rememberedSession(s)
      const waiting = await skippedLogin(s)
      const logout = await s.browser.open(`${s.account.base}/oauth/logout?${new URLSearchParams({ id_token_hint: idToken })}`)
      expect(logout.status, logout.text).toBeLessThan(400)
      expect((await s.app.answer('login', waiting, 'accept', { subject: 'user-1' })).status).toBe(404)
    })

    it('re-checks the session of a skipped login at each step: one that lapsed meanwhile is refused', async () => {
      const s = await setup({ skip_consent: true })
      await rememberedSession(s, { remember_for: 300 })
      h.current.clock.advanceSeconds(200)
      const waiting = await skippedLogin(s)
      const verifierUrl = await s.app.accept('login', await skippedLogin(s), { subject: 'user-1' })
      h.current.clock.advanceSeconds(150)
      expect((await s.app.loginRequest(waiting)).status).toBe(404)
      expect((await s.app.answer('login', waiting, 'accept', { subject: 'user-1' })).status).toBe(404)
      expectClientError((await s.browser.open(verifierUrl)).location, 'login_required')
    })

    it("closes a consent waiting on the session, and leaves other subjects' sign-ins alone", async () => {
      const s = await setup()
      await rememberedSession(s)
      const login = await skippedLogin(s)
      const consent = challengeIn((await s.browser.open(await s.app.accept('login', login, { subject: 'user-1' }))).location, 'consent')
      const other = new Browser()
      const otherLogin = challengeIn((await other.open(authorizationUrl(s.account.base, s.rp.clientId))).location, 'login')

      expect((await management(s, '/oauth/sessions?subject=user-1', 'DELETE', 'herald:sessions:write')).status).toBe(204)
      expect((await s.app.consentRequest(consent)).status).toBe(404)
      const callback = await other.open(await s.app.accept('login', otherLogin, { subject: 'user-2' }))
      expect(challengeIn(callback.location, 'consent')).toBeTruthy()
    })
  })

  describe('revoking a consent closes what was granted under it and not yet redeemed', () => {
    it('refuses a code issued before DELETE /oauth/consents', async () => {
      const s = await setup()
      const callback = await signIn(s.browser, s.app, authorizationUrl(s.account.base, s.rp.clientId), 'user-1')
      expect((await management(s, `/oauth/consents?subject=user-1&client_id=${s.rp.clientId}`, 'DELETE', 'herald:sessions:write')).status).toBe(204)
      const redeemed = await redeemCode<{ error: string; error_description: string }>(s.account.base, s.rp, callback)
      expect(redeemed.status).toBe(400)
      expect(redeemed.body.error).toBe('invalid_grant')
      expect(redeemed.body.error_description).toMatch(/withdrawn/)
    })

    it.runIf(dialect === 'postgres')('answers that a code was withdrawn when the revocation closes it while its redemption waits', async () => {
      const s = await setup()
      const callback = await signIn(s.browser, s.app, authorizationUrl(s.account.base, s.rp.clientId), 'user-1')
      const [revoked, redeemed] = await whileFlowLocked(h.current, s.account.id, await flowOfCode(s, callback), async (waiters) => {
        // The revocation queues for the flow's row first, the redemption (which read the code live) behind it.
        const revocation = management(s, `/oauth/consents?subject=user-1&client_id=${s.rp.clientId}`, 'DELETE', 'herald:sessions:write')
        await waiters(1)
        const redemption = redeemCode<{ error: string; error_description: string }>(s.account.base, s.rp, callback)
        await waiters(2)
        return [revocation, redemption] as const
      })
      expect((await revoked).status).toBe(204)
      const answer = await redeemed
      expect(answer.status).toBe(400)
      expect(answer.body).toEqual({ error: 'invalid_grant', error_description: "The code was withdrawn: the user's session ended or the consent was revoked" })
    })

    it('refuses the code of an account disabled since, once it is enabled again', async () => {
      const s = await setup()
      const callback = await signIn(s.browser, s.app, authorizationUrl(s.account.base, s.rp.clientId), 'user-1')
      for (const status of ['disabled', 'active']) {
        const changed = await call(`${h.current.origin}/accounts/${s.account.id}`, 'PATCH', { token: OPERATOR_TOKEN, json: { status } })
        expect(changed.status, changed.text).toBe(200)
      }
      expect((await redeemCode<{ error: string }>(s.account.base, s.rp, callback)).body.error).toBe('invalid_grant')
    })
  })

  describe('a re-sent answer of the login app', () => {
    it('gets the same redirect_to for the same body, in any key order, and 409 for another', async () => {
      const s = await setup()
      const login = challengeIn((await s.browser.open(authorizationUrl(s.account.base, s.rp.clientId))).location, 'login')
      const first = await s.app.accept('login', login, { subject: 'user-1', remember: true, context: { a: 1, b: [2] } })
      expect(await s.app.accept('login', login, { context: { b: [2], a: 1 }, remember: true, subject: 'user-1' })).toBe(first)
      expect((await s.app.answer('login', login, 'accept', { subject: 'user-1' })).status).toBe(409)
      expect((await s.app.answer('login', login, 'reject', { error: 'access_denied' })).status).toBe(409)

      const consent = challengeIn((await s.browser.open(first)).location, 'consent')
      // Once the browser brought the verifier back, the challenge names nothing.
      expect((await s.app.answer('login', login, 'accept', { subject: 'user-1', remember: true, context: { a: 1, b: [2] } })).status).toBe(404)
      const granted = await s.app.accept('consent', consent, { grant_scope: ['openid'] })
      expect(await s.app.accept('consent', consent, { grant_scope: ['openid'] })).toBe(granted)
      expect((await s.app.answer('consent', consent, 'accept', { grant_scope: ['openid'], remember: true })).status).toBe(409)
      const callback = await s.browser.open(granted)
      expect((await redeemCode(s.account.base, s.rp, new URL(callback.location!))).status).toBe(200)

      const events = await call<{ data: Array<{ type: string }> }>(`${s.account.base}/webhooks/events?limit=50`, 'GET', { token: await managementToken(s.account) })
      const types = events.body.data.map((event) => event.type)
      expect(types.filter((type) => type === 'oauth.login.accepted')).toHaveLength(1)
      expect(types.filter((type) => type === 'oauth.consent.granted')).toHaveLength(1)
    })

    it('answers a re-sent rejection likewise', async () => {
      const s = await setup()
      const login = challengeIn((await s.browser.open(authorizationUrl(s.account.base, s.rp.clientId, { state: 's-1' }))).location, 'login')
      const rejected = await s.app.answer('login', login, 'reject', { error: 'access_denied', error_description: 'no' })
      const again = await s.app.answer('login', login, 'reject', { error: 'access_denied', error_description: 'no' })
      expect(again.status).toBe(200)
      expect(again.body.redirect_to).toBe(rejected.body.redirect_to)
      expect((await s.app.answer('login', login, 'accept', { subject: 'user-1' })).status).toBe(409)
      expectClientError((await s.browser.open(again.body.redirect_to)).location, 'access_denied')
    })
  })

  describe('an account without consent_url', () => {
    async function withoutConsentApp() {
      const s = await setup({ skip_consent: true })
      const patched = await call(`${s.account.base}/settings`, 'PATCH', { token: await managementToken(s.account), json: { consent_url: null } })
      expect(patched.status, patched.text).toBe(200)
      return s
    }

    it('refuses prompt=consent from a first-party client before writing anything', async () => {
      const s = await withoutConsentApp()
      const before = [await rows('authorization_flows', s.account.id), await rows('browser_sessions', s.account.id)]
      const answer = await s.browser.open(authorizationUrl(s.account.base, s.rp.clientId, { prompt: 'consent' }))
      expect(answer.status).toBe(302)
      expectClientError(answer.location, 'server_error')
      expect([await rows('authorization_flows', s.account.id), await rows('browser_sessions', s.account.id)]).toEqual(before)
    })

    it('refuses it, writing nothing, when the consent app goes away during the login', async () => {
      const s = await setup({ skip_consent: true })
      const login = challengeIn((await s.browser.open(authorizationUrl(s.account.base, s.rp.clientId, { prompt: 'consent' }))).location, 'login')
      const verifierUrl = await s.app.accept('login', login, { subject: 'user-1', remember: true })
      await call(`${s.account.base}/settings`, 'PATCH', { token: await managementToken(s.account), json: { consent_url: null } })
      const back = await s.browser.open(verifierUrl)
      expect(back.status).toBe(302)
      expectClientError(back.location, 'server_error')
      expect(back.headers.getSetCookie().some((cookie) => cookie.startsWith('herald_session='))).toBe(false)
      expect(await rows('browser_sessions', s.account.id)).toBe(0)
    })
  })

  describe('prompt=select_account', () => {
    it('is passed on to the login app, and the login is not skipped', async () => {
      const s = await setup()
      await rememberedSession(s)
      const started = await s.browser.open(authorizationUrl(s.account.base, s.rp.clientId, { prompt: 'select_account' }))
      const request = await s.app.loginRequest(challengeIn(started.location, 'login'))
      expect(request.body).toMatchObject({ skip: false, subject: null })
      expect(new URL(request.body.request_url as string).searchParams.get('prompt')).toBe('select_account')
      const discovery = await call<{ prompt_values_supported: string[] }>(`${s.account.issuer}/.well-known/openid-configuration`, 'GET')
      expect(discovery.body.prompt_values_supported).toContain('select_account')
    })
  })
})
