import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { forEachDialect, useHerald } from '../support/herald.js'
import { basicAuth, call, createAccount, managementToken } from '../support/http.js'
import { Browser, LoginApp, REDIRECT_URI, type SignInSetup, challengeIn, prepareSignIn, setupSignIn, signIn } from '../support/sign-in.js'

const VERIFIER = 'v'.repeat(43)
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url')
const WEB_REDIRECT = 'https://rp.example/callback'

/** RFC 9700 (OAuth 2.0 Security BCP) and RFC 6749 §4.1.2.1, tried from outside, as an attacker would. */
forEachDialect((dialect) => {
  const h = useHerald(dialect)

  const setup = (client: Record<string, unknown> = {}) => setupSignIn(h.current, { redirect_uris: [REDIRECT_URI, WEB_REDIRECT], ...client })

  function authorizeUrl({ account, rp }: SignInSetup, params: Record<string, string | undefined> = {}): string {
    const query: Record<string, string> = { response_type: 'code', client_id: rp.clientId, redirect_uri: REDIRECT_URI, scope: 'openid', state: 's-1', code_challenge: CHALLENGE, code_challenge_method: 'S256' }
    for (const [name, value] of Object.entries(params)) {
      if (value === undefined) delete query[name]
      else query[name] = value
    }
    return `${account.base}/oauth/authorize?${new URLSearchParams(query)}`
  }

  async function redeem({ account, rp }: SignInSetup, callback: URL, overrides: Record<string, string> = {}, credentials = rp) {
    return call<{ access_token: string; error?: string }>(`${account.base}/oauth/tokens`, 'POST', {
      headers: { authorization: basicAuth(credentials.clientId, credentials.clientSecret) },
      form: { grant_type: 'authorization_code', code: callback.searchParams.get('code') ?? '', redirect_uri: REDIRECT_URI, code_verifier: VERIFIER, ...overrides },
    })
  }

  /** An error answered in the browser, never sent to the client's redirect_uri. */
  function expectNotRedirected(answer: { status: number; location: string | null; text: string }, error: string) {
    expect(answer.location).toBeNull()
    expect(answer.status).toBe(400)
    expect(answer.text).toMatch(new RegExp(`^${error}: `))
  }

  /** An error sent to the client's redirect_uri, with its state and Herald's issuer (RFC 9207). */
  function expectRedirectedError(answer: { status: number; location: string | null }, issuer: string, error: string) {
    expect(answer.status).toBe(302)
    const location = new URL(answer.location!)
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI)
    expect(Object.fromEntries(location.searchParams)).toMatchObject({ error, state: 's-1', iss: issuer })
  }

  describe('redirect_uri', () => {
    const variants = {
      'a trailing slash': `${WEB_REDIRECT}/`,
      'a changed case': WEB_REDIRECT.replace('callback', 'Callback'),
      'an extra query': `${WEB_REDIRECT}?next=/admin`,
      'a fragment': `${WEB_REDIRECT}#x`,
      'another port on a non-loopback host': WEB_REDIRECT.replace('rp.example', 'rp.example:8443'),
      'another scheme': WEB_REDIRECT.replace('https:', 'http:'),
    }
    for (const [name, uri] of Object.entries(variants)) {
      it(`refuses ${name}, without redirecting`, async () => {
        expectNotRedirected(await new Browser().open(authorizeUrl(await setup(), { redirect_uri: uri })), 'invalid_request')
      })
    }

    it("refuses another client's redirect_uri, and an unknown client, without redirecting", async () => {
      const s = await setup()
      const other = await prepareSignIn(s.account, { redirect_uris: ['https://other.example/cb'] })
      expectNotRedirected(await new Browser().open(authorizeUrl(s, { redirect_uri: 'https://other.example/cb' })), 'invalid_request')
      expectNotRedirected(await new Browser().open(authorizeUrl(s, { client_id: 'cli_unknown' })), 'invalid_request')
      expectNotRedirected(await new Browser().open(authorizeUrl({ ...s, rp: other }, { redirect_uri: REDIRECT_URI })), 'invalid_request')
    })

    it("lets only a native app's loopback URI change its port (RFC 8252 §7.3)", async () => {
      const s = await setup({ application_type: 'native' })
      const started = await new Browser().open(authorizeUrl(s, { redirect_uri: REDIRECT_URI.replace(':9/', ':53127/') }))
      expect(started.status).toBe(302)
      challengeIn(started.location, 'login')
    })

    it("sends errors it can't redirect to the account's error_url when it has one", async () => {
      const s = await setup()
      const token = await managementToken(s.account)
      expect((await call(`${s.account.base}/settings`, 'PATCH', { token, json: { error_url: 'https://login.example/error' } })).status).toBe(200)
      const answer = await new Browser().open(authorizeUrl(s, { redirect_uri: `${WEB_REDIRECT}/` }))
      expect(answer.status).toBe(302)
      expect(answer.location).toMatch(/^https:\/\/login\.example\/error\?error=invalid_request&error_description=/)
    })
  })

  describe('settings', () => {
    it('takes only https app URLs (http on loopback), and require_par makes authorize refuse unpushed requests', async () => {
      const s = await setup()
      const token = await managementToken(s.account)
      for (const url of ['http://login.example/', 'javascript:alert(1)', 'https://login.example/#x', 'login']) {
        const answer = await call(`${s.account.base}/settings`, 'PATCH', { token, json: { login_url: url } })
        expect(answer.status, url).toBe(400)
      }
      expect((await call(`${s.account.base}/settings`, 'PATCH', { token, json: { error_url: 'http://[::1]:3000/error', require_par: true } })).status).toBe(200)
      expectRedirectedError(await new Browser().open(authorizeUrl(s)), s.account.issuer, 'invalid_request')
      const metadata = await call<Record<string, unknown>>(`${s.account.issuer}/.well-known/openid-configuration`, 'GET')
      expect(metadata.body.require_pushed_authorization_requests).toBe(true)
      const pushed = await call<{ request_uri: string; expires_in: number }>(`${s.account.base}/oauth/par`, 'POST', {
        headers: { authorization: basicAuth(s.rp.clientId, s.rp.clientSecret) },
        form: Object.fromEntries(new URL(authorizeUrl(s)).searchParams),
      })
      expect(pushed.status).toBe(201)
      expect(pushed.body.expires_in).toBe(60)
      const started = await new Browser().open(`${s.account.base}/oauth/authorize?client_id=${s.rp.clientId}&request_uri=${encodeURIComponent(pushed.body.request_uri)}`)
      challengeIn(started.location, 'login')
      // Another client can't use it, and it lapses after 60 s.
      const other = await prepareSignIn(s.account)
      const late = await call<{ request_uri: string }>(`${s.account.base}/oauth/par`, 'POST', {
        headers: { authorization: basicAuth(s.rp.clientId, s.rp.clientSecret) },
        form: Object.fromEntries(new URL(authorizeUrl(s)).searchParams),
      })
      expect((await new Browser().open(`${s.account.base}/oauth/authorize?client_id=${other.clientId}&request_uri=${encodeURIComponent(late.body.request_uri)}`)).location).toMatch(/^http:\/\/\[::1\]:3000\/error\?error=invalid_request_uri/)
      h.current.clock.advance(61_000)
      expect((await new Browser().open(`${s.account.base}/oauth/authorize?client_id=${s.rp.clientId}&request_uri=${encodeURIComponent(late.body.request_uri)}`)).location).toMatch(/error=invalid_request_uri/)
    })
  })

  describe('PKCE', () => {
    it('requires a challenge from a public client, and from every client by default', async () => {
      const publicClient = await setup({ token_endpoint_auth_method: 'none' })
      expectRedirectedError(await new Browser().open(authorizeUrl(publicClient, { code_challenge: undefined, code_challenge_method: undefined })), publicClient.account.issuer, 'invalid_request')
      const confidential = await setup()
      expectRedirectedError(await new Browser().open(authorizeUrl(confidential, { code_challenge: undefined, code_challenge_method: undefined })), confidential.account.issuer, 'invalid_request')
    })

    it('refuses the plain method, and a challenge without a method (plain by default)', async () => {
      const s = await setup()
      expectRedirectedError(await new Browser().open(authorizeUrl(s, { code_challenge: VERIFIER, code_challenge_method: 'plain' })), s.account.issuer, 'invalid_request')
      expectRedirectedError(await new Browser().open(authorizeUrl(s, { code_challenge_method: undefined })), s.account.issuer, 'invalid_request')
    })

    it('refuses a wrong verifier, and a verifier when there was no challenge', async () => {
      const s = await setup()
      const callback = await signIn(new Browser(), s.app, authorizeUrl(s), 'user-1')
      expect((await redeem(s, callback, { code_verifier: 'w'.repeat(43) })).body.error).toBe('invalid_grant')

      const optedOut = await setup({ require_pkce: false })
      const plainCallback = await signIn(new Browser(), optedOut.app, authorizeUrl(optedOut, { code_challenge: undefined, code_challenge_method: undefined }), 'user-1')
      expect((await redeem(optedOut, plainCallback)).body.error).toBe('invalid_grant')
    })

    it('does not let a public client opt out', async () => {
      const account = await createAccount(h.current)
      const token = await managementToken(account)
      const created = await call(`${account.base}/oauth/clients`, 'POST', {
        token,
        json: { redirect_uris: [REDIRECT_URI], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none', require_pkce: false },
      })
      expect(created.status).toBe(400)
    })
  })

  describe('the code', () => {
    it('is single-use: a second redemption fails and revokes the token the first one issued', async () => {
      const s = await setup()
      const callback = await signIn(new Browser(), s.app, authorizeUrl(s), 'user-1')
      const first = await redeem(s, callback)
      expect(first.status).toBe(200)
      const second = await redeem(s, callback)
      expect(second.status).toBe(400)
      expect(second.body.error).toBe('invalid_grant')
      const introspected = await call<{ active: boolean }>(`${s.account.base}/oauth/introspect`, 'POST', {
        headers: { authorization: basicAuth(s.rp.clientId, s.rp.clientSecret) },
        form: { token: first.body.access_token },
      })
      expect(introspected.body.active).toBe(false)
    })

    it.runIf(dialect === 'postgres')('gives tokens to exactly one of two redemptions racing', async () => {
      const s = await setup()
      const callback = await signIn(new Browser(), s.app, authorizeUrl(s), 'user-1')
      const answers = await Promise.all([redeem(s, callback), redeem(s, callback), redeem(s, callback)])
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400, 400])
    })

    it("is refused at another client, at another redirect_uri, after its lifetime, and at another account's token endpoint", async () => {
      const s = await setup()
      const other = await prepareSignIn(s.account)
      const callback = await signIn(new Browser(), s.app, authorizeUrl(s), 'user-1')
      expect((await redeem(s, callback, {}, other)).body.error).toBe('invalid_grant')
      expect((await redeem(s, callback, { redirect_uri: `${REDIRECT_URI}/x` })).body.error).toBe('invalid_grant')

      const b = await createAccount(h.current)
      const bClient = await prepareSignIn(b)
      const foreign = await call<{ error: string }>(`${b.base}/oauth/tokens`, 'POST', {
        headers: { authorization: basicAuth(bClient.clientId, bClient.clientSecret) },
        form: { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: REDIRECT_URI, code_verifier: VERIFIER },
      })
      expect(foreign.body.error).toBe('invalid_grant')

      h.current.clock.advance(61_000)
      expect((await redeem(s, callback)).body.error).toBe('invalid_grant')
    })
  })

  describe('authorize', () => {
    it('answers prompt=none without a session with login_required, at the redirect_uri with iss', async () => {
      const s = await setup()
      expectRedirectedError(await new Browser().open(authorizeUrl(s, { prompt: 'none' })), s.account.issuer, 'login_required')
    })

    it('forces a new login with prompt=login, and once the session is older than max_age', async () => {
      const s = await setup()
      const browser = new Browser()
      await signIn(browser, s.app, authorizeUrl(s), 'user-1')
      const skipped = async (params: Record<string, string>) => {
        const started = await browser.open(authorizeUrl(s, params))
        return (await s.app.loginRequest(challengeIn(started.location, 'login'))).body.skip
      }
      expect(await skipped({})).toBe(true)
      expect(await skipped({ prompt: 'login' })).toBe(false)
      h.current.clock.advance(120_000)
      expect(await skipped({ max_age: '300' })).toBe(true)
      expect(await skipped({ max_age: '60' })).toBe(false)
    })

    it('answers prompt=none with consent_required when no remembered consent covers the request', async () => {
      const s = await setup()
      const browser = new Browser()
      await signIn(browser, s.app, authorizeUrl(s), 'user-1')
      expectRedirectedError(await browser.open(authorizeUrl(s, { prompt: 'none' })), s.account.issuer, 'consent_required')
      await signIn(browser, s.app, authorizeUrl(s), 'user-1', { remember: true })
      const started = await browser.open(authorizeUrl(s, { prompt: 'none' }))
      expect((await s.app.loginRequest(challengeIn(started.location, 'login'))).body).toMatchObject({ skip: true, subject: 'user-1' })
    })

    it('checks id_token_hint: the same user goes on, another needs a new login, and garbage is refused', async () => {
      const s = await setup()
      const idToken = async (browser: Browser, subject: string) => {
        const callback = await signIn(browser, s.app, authorizeUrl(s, { scope: 'openid', nonce: 'n' }), subject)
        const answer = await call<{ id_token: string }>(`${s.account.base}/oauth/tokens`, 'POST', {
          headers: { authorization: basicAuth(s.rp.clientId, s.rp.clientSecret) },
          form: { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: REDIRECT_URI, code_verifier: VERIFIER },
        })
        return answer.body.id_token
      }
      const browser = new Browser()
      const alice = await idToken(browser, 'alice')
      const bob = await idToken(new Browser(), 'bob')
      await signIn(browser, s.app, authorizeUrl(s), 'alice', { remember: true })
      const same = await browser.open(authorizeUrl(s, { prompt: 'none', id_token_hint: alice }))
      expect((await s.app.loginRequest(challengeIn(same.location, 'login'))).body).toMatchObject({ skip: true, subject: 'alice' })
      expectRedirectedError(await browser.open(authorizeUrl(s, { prompt: 'none', id_token_hint: bob })), s.account.issuer, 'login_required')
      const other = await browser.open(authorizeUrl(s, { id_token_hint: bob }))
      expect((await s.app.loginRequest(challengeIn(other.location, 'login'))).body.skip).toBe(false)
      expectRedirectedError(await browser.open(authorizeUrl(s, { id_token_hint: 'a.b.c' })), s.account.issuer, 'invalid_request')
    })

    it("forgets the previous user's session when another signs in without remember", async () => {
      const s = await setup()
      const browser = new Browser()
      await signIn(browser, s.app, authorizeUrl(s), 'alice')
      const started = await browser.open(authorizeUrl(s, { prompt: 'login' }))
      const back = await browser.open(await s.app.accept('login', challengeIn(started.location, 'login'), { subject: 'bob', remember: false }))
      expect(back.status).toBe(302)
      const next = await browser.open(authorizeUrl(s))
      expect((await s.app.loginRequest(challengeIn(next.location, 'login'))).body).toMatchObject({ skip: false, subject: null })
    })

    it('keeps flows started side by side in one browser apart', async () => {
      const s = await setup()
      const browser = new Browser()
      const first = challengeIn((await browser.open(authorizeUrl(s))).location, 'login')
      const second = challengeIn((await browser.open(authorizeUrl(s, { state: 's-2' }))).location, 'login')
      expect((await browser.open(await s.app.accept('login', first, { subject: 'u' }))).status).toBe(302)
      expect((await browser.open(await s.app.accept('login', second, { subject: 'u' }))).status).toBe(302)
    })

    it('refuses request objects, registration, and an over-long state, at the redirect_uri', async () => {
      const s = await setup()
      expectRedirectedError(await new Browser().open(authorizeUrl(s, { request: 'eyJhbGciOiJub25lIn0.e30.' })), s.account.issuer, 'request_not_supported')
      expectRedirectedError(await new Browser().open(authorizeUrl(s, { registration: '{}' })), s.account.issuer, 'registration_not_supported')
      const long = await new Browser().open(authorizeUrl(s, { state: 's'.repeat(3000) }))
      expect(new URL(long.location!).searchParams.get('error')).toBe('invalid_request')
    })

    it('uses a request_uri once, even when its request ends in an error', async () => {
      const s = await setup()
      const pushed = await call<{ request_uri: string }>(`${s.account.base}/oauth/par`, 'POST', {
        headers: { authorization: basicAuth(s.rp.clientId, s.rp.clientSecret) },
        form: { ...Object.fromEntries(new URL(authorizeUrl(s)).searchParams), prompt: 'none' },
      })
      const url = `${s.account.base}/oauth/authorize?client_id=${s.rp.clientId}&request_uri=${encodeURIComponent(pushed.body.request_uri)}`
      expectRedirectedError(await new Browser().open(url), s.account.issuer, 'login_required')
      expect((await new Browser().open(url)).text).toMatch(/^invalid_request_uri/)
    })

    it('refuses an unregistered scope with invalid_scope, never dropping it', async () => {
      const s = await setup()
      expectRedirectedError(await new Browser().open(authorizeUrl(s, { scope: 'openid admin' })), s.account.issuer, 'invalid_scope')
      expectRedirectedError(await new Browser().open(authorizeUrl(s, { scope: 'openid offline_access' })), s.account.issuer, 'invalid_scope')
    })

    it('refuses other response types, and a repeated parameter', async () => {
      const s = await setup()
      expectRedirectedError(await new Browser().open(authorizeUrl(s, { response_type: 'token' })), s.account.issuer, 'unsupported_response_type')
      const repeated = await new Browser().open(`${authorizeUrl(s)}&scope=email`)
      expect(repeated.status).toBe(400)
      expect(repeated.location).toBeNull()
    })

    it('sends no-store, no-referrer and anti-framing headers, and no CORS', async () => {
      const s = await setup()
      const response = await fetch(authorizeUrl(s), { redirect: 'manual', headers: { origin: 'https://evil.example' } })
      expect(response.status).toBe(302)
      expect(response.headers.get('cache-control')).toBe('no-store')
      expect(response.headers.get('referrer-policy')).toBe('no-referrer')
      expect(response.headers.get('x-frame-options')).toBe('DENY')
      expect(response.headers.get('content-security-policy')).toBe("frame-ancestors 'none'")
      expect(response.headers.get('access-control-allow-origin')).toBeNull()
      const cookie = response.headers.getSetCookie()[0]!
      expect(cookie).toMatch(/^herald_flow_\w{12}=[^;]+; Max-Age=1200; Path=\/accounts\/acct_\w+\/; HttpOnly; SameSite=Lax$/)
    })

    it('posts the response to the client with form_post', async () => {
      const s = await setup()
      const browser = new Browser()
      const started = await browser.open(authorizeUrl(s, { response_mode: 'form_post' }))
      const back = await browser.open(await s.app.accept('login', challengeIn(started.location, 'login'), { subject: 'u' }))
      const consent = challengeIn(back.location, 'consent')
      const page = await browser.open(await s.app.accept('consent', consent, { grant_scope: ['openid'] }))
      expect(page.status).toBe(200)
      expect(page.headers.get('content-type')).toMatch(/^text\/html/)
      expect(page.text).toContain(`action="${REDIRECT_URI}"`)
      expect(page.text).toMatch(/name="code" value="[\w-]+"/)
      expect(page.text).toContain(`name="iss" value="${s.account.issuer}"`)
    })
  })

  describe('login and consent verifiers', () => {
    async function acceptedLogin(s: SignInSetup) {
      const browser = new Browser()
      const started = await browser.open(authorizeUrl(s))
      const verifierUrl = await s.app.accept('login', challengeIn(started.location, 'login'), { subject: 'user-1' })
      return { browser, verifierUrl }
    }

    it('refuses a verifier in another browser, even once the right one has been seen', async () => {
      const s = await setup()
      const { browser, verifierUrl } = await acceptedLogin(s)
      expectNotRedirected(await new Browser().open(verifierUrl), 'invalid_request')
      const thief = new Browser()
      for (const name of browser.cookies.keys()) thief.cookies.set(name, 'guessed')
      expectNotRedirected(await thief.open(verifierUrl), 'invalid_request')
      expect((await browser.open(verifierUrl)).status).toBe(302)
    })

    it('refuses a replayed verifier', async () => {
      const s = await setup()
      const { browser, verifierUrl } = await acceptedLogin(s)
      expect((await browser.open(verifierUrl)).status).toBe(302)
      expectNotRedirected(await browser.open(verifierUrl), 'invalid_request')
    })

    it('refuses an expired verifier, and answers 404 for an expired challenge', async () => {
      const s = await setup()
      const browser = new Browser()
      const started = await browser.open(authorizeUrl(s))
      const challenge = challengeIn(started.location, 'login')
      const verifierUrl = await s.app.accept('login', challenge, { subject: 'user-1' })
      h.current.clock.advance(601_000)
      expectNotRedirected(await browser.open(verifierUrl), 'invalid_request')
      expect((await s.app.loginRequest(challenge)).status).toBe(404)
    })
  })

  describe('the login app API', () => {
    it('answers 409 to a different second answer, 404 to an unknown challenge, and 400 to garbage', async () => {
      const s = await setup()
      const started = await new Browser().open(authorizeUrl(s))
      const challenge = challengeIn(started.location, 'login')
      expect((await s.app.answer('login', challenge, 'accept', { subject: 'u' })).status).toBe(200)
      expect((await s.app.answer('login', challenge, 'accept', { subject: 'v' })).status).toBe(409)
      expect((await s.app.answer('login', challenge, 'reject', { error: 'access_denied' })).status).toBe(409)
      expect((await s.app.loginRequest('nope')).status).toBe(404)
      expect((await s.app.loginRequest('x'.repeat(300))).status).toBe(404)
      for (const body of [{}, { subject: '' }, { subject: 'u', extra: 1 }, { subject: 5 }, { subject: 'u', amr: 'pwd' }]) {
        expect((await s.app.answer('login', 'whatever', 'accept', body)).status).toBe(400)
      }
      const token = await managementToken(s.account, 'herald:login')
      const badJson = await call(`${s.account.base}/oauth/login-requests/${challenge}/accept`, 'POST', { token, body: '{"subject":', headers: { 'content-type': 'application/json' } })
      expect(badJson.status).toBe(400)
      expect((await s.app.answer('login', challenge, 'reject', { error: 'made_up' })).status).toBe(400)
    })

    it('refuses scopes that were not requested and claims Herald sets, writing nothing', async () => {
      const s = await setup()
      const browser = new Browser()
      const started = await browser.open(authorizeUrl(s))
      const back = await browser.open(await s.app.accept('login', challengeIn(started.location, 'login'), { subject: 'u' }))
      const consent = challengeIn(back.location, 'consent')
      expect((await s.app.answer('consent', consent, 'accept', { grant_scope: ['openid', 'email'] })).status).toBe(400)
      expect((await s.app.answer('consent', consent, 'accept', { grant_scope: ['openid'], session: { id_token: { sub: 'admin' } } })).status).toBe(400)
      expect((await s.app.answer('consent', consent, 'accept', { grant_scope: ['openid'], session: { access_token: { scope: 'all' } } })).status).toBe(400)
      expect((await s.app.consentRequest(consent)).status).toBe(200)
    })

    it('sends a rejection to the client as its error, and records the events', async () => {
      const s = await setup()
      const browser = new Browser()
      const started = await browser.open(authorizeUrl(s))
      const verifierUrl = (await s.app.answer('login', challengeIn(started.location, 'login'), 'reject', { error: 'access_denied', error_description: 'No' })).body.redirect_to
      expectRedirectedError(await browser.open(verifierUrl), s.account.issuer, 'access_denied')
      await signIn(new Browser(), s.app, authorizeUrl(s), 'user-9')

      const token = await managementToken(s.account)
      const events = await call<{ data: Array<{ type: string; data: Record<string, unknown> }> }>(`${s.account.base}/webhooks/events?limit=50`, 'GET', { token })
      const types = events.body.data.map((event) => event.type)
      expect(types).toEqual(expect.arrayContaining(['oauth.login.rejected', 'oauth.login.accepted', 'oauth.consent.granted']))
      const signInEvents = events.body.data.filter((event) => /^oauth\.(login|consent)\./.test(event.type))
      expect(JSON.stringify(signInEvents)).not.toMatch(/challenge|verifier|code|secret/)
    })

    it("keeps accounts apart: B's herald:login token can't read or answer A's challenges", async () => {
      const a = await setup()
      const started = await new Browser().open(authorizeUrl(a))
      const challenge = challengeIn(started.location, 'login')
      const b = await createAccount(h.current)
      const bApp = await LoginApp.of(b)
      expect((await bApp.loginRequest(challenge)).status).toBe(404)
      expect((await bApp.answer('login', challenge, 'accept', { subject: 'u' })).status).toBe(404)
      expect((await call(`${a.account.base}/oauth/login-requests/${challenge}`, 'GET', { token: await managementToken(b, 'herald:login') })).status).toBe(401)
      expect((await a.app.loginRequest(challenge)).status).toBe(200)
    })
  })

  describe('garbage', () => {
    it('answers garbage at authorize, PAR, the token endpoint and userinfo with a 4xx or an error redirect, writing no flow', async () => {
      const s = await setup()
      const { db } = h.current.herald.database
      const flows = async () => (await db.selectFrom('authorization_flows').select('id').where('account_id', '=', s.account.id).execute()).length
      const base = authorizeUrl(s)
      const queries = [
        '',
        '?client_id=',
        '?client_id[]=x',
        `?client_id=${'c'.repeat(5000)}`,
        `${base.slice(base.indexOf('?'))}&state=${'s'.repeat(5000)}`,
        `${base.slice(base.indexOf('?'))}&max_age=-1`,
        `${base.slice(base.indexOf('?'))}&prompt=none%20login`,
        `${base.slice(base.indexOf('?'))}&resource=not%20a%20uri`,
        `${base.slice(base.indexOf('?'))}&response_mode=fragment`,
        `${base.slice(base.indexOf('?'))}&code_challenge=short`,
        '?login_verifier=x',
        '?consent_verifier=%00',
        `?request_uri=urn:ietf:params:oauth:request_uri:nope&client_id=${s.rp.clientId}`,
        '?%E0%A4%A=1',
      ]
      for (const query of queries) {
        const answer = await new Browser().open(`${s.account.base}/oauth/authorize${query}`)
        expect(answer.status, `${query.slice(0, 80)}: ${answer.text}`).toBeGreaterThanOrEqual(300)
        expect(answer.status, query.slice(0, 80)).toBeLessThan(500)
      }
      const posted = await fetch(`${s.account.base}/oauth/authorize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', redirect: 'manual' })
      expect(posted.status).toBe(400)
      expect(await flows()).toBe(0)

      const rp = { authorization: basicAuth(s.rp.clientId, s.rp.clientSecret) }
      const pushes: Array<Record<string, string>> = [{}, { request_uri: 'urn:x' }, { response_type: 'code', redirect_uri: 'https://evil.example/' }, { response_type: 'code', redirect_uri: REDIRECT_URI, scope: 'nope' }]
      for (const form of pushes) {
        const answer = await call<{ error: string }>(`${s.account.base}/oauth/par`, 'POST', { headers: rp, form })
        expect(answer.status, JSON.stringify(form)).toBe(400)
        expect(typeof answer.body.error).toBe('string')
      }
      expect((await call(`${s.account.base}/oauth/par`, 'POST', { form: { client_id: s.rp.clientId } })).status).toBe(401)
      expect(await flows()).toBe(0)

      const redemptions: Array<Record<string, string>> = [{ code: 'x'.repeat(300) }, { code: '' }, { code: 'nope', redirect_uri: REDIRECT_URI }, { code: 'nope', code_verifier: 'x'.repeat(200) }]
      for (const form of redemptions) {
        const answer = await call(`${s.account.base}/oauth/tokens`, 'POST', { headers: rp, form: { grant_type: 'authorization_code', ...form } })
        expect(answer.status, JSON.stringify(form)).toBe(400)
      }
      for (const token of ['x', 'a.b.c', 'e'.repeat(10_000)]) {
        expect((await call(`${s.account.base}/oauth/userinfo`, 'POST', { token, form: { junk: 'x' } })).status).toBe(401)
      }
    })
  })

  describe('the janitor', () => {
    it('deletes flows once they lapse, keeping a redeemed one as long as its access token', async () => {
      const s = await setup()
      const { db } = h.current.herald.database
      const { pruners } = h.current.herald
      const flowsOf = async () => (await db.selectFrom('authorization_flows').select('stage').where('account_id', '=', s.account.id).execute()).map((row) => row.stage).sort()
      await new Browser().open(authorizeUrl(s))
      const callback = await signIn(new Browser(), s.app, authorizeUrl(s), 'user-1')
      const { access_token: accessToken } = (await redeem(s, callback)).body
      expect(await flowsOf()).toEqual(['login', 'redeemed'])

      h.current.clock.advance(601_000)
      await pruners.flows.runOnce()
      expect(await flowsOf()).toEqual(['redeemed'])
      expect((await call(`${s.account.base}/oauth/userinfo`, 'GET', { token: accessToken })).status).toBe(200)

      h.current.clock.advance(3600_000)
      await pruners.flows.runOnce()
      expect(await flowsOf()).toEqual([])
    })
  })

  describe('userinfo', () => {
    it("refuses another account's token, a token without openid, and no token, per RFC 6750", async () => {
      const a = await setup()
      const callback = await signIn(new Browser(), a.app, authorizeUrl(a), 'user-1')
      const { access_token: accessToken } = (await redeem(a, callback)).body
      expect((await call(`${a.account.base}/oauth/userinfo`, 'GET', { token: accessToken })).status).toBe(200)

      const b = await createAccount(h.current)
      const foreign = await call(`${b.base}/oauth/userinfo`, 'GET', { token: accessToken })
      expect(foreign.status).toBe(401)
      expect(foreign.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/)

      const machine = await call(`${a.account.base}/oauth/userinfo`, 'GET', { token: await managementToken(a.account) })
      expect(machine.status).toBe(403)
      expect(machine.headers.get('www-authenticate')).toMatch(/^Bearer error="insufficient_scope"/)

      const none = await call(`${a.account.base}/oauth/userinfo`, 'GET')
      expect(none.status).toBe(401)
      expect(none.headers.get('www-authenticate')).toBe('Bearer')
    })
  })
})
