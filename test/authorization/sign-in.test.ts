import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import * as oidc from 'openid-client'
import { describe, expect, it } from 'vitest'
import { forEachDialect, useHerald } from '../support/herald.js'
import { createAccount } from '../support/http.js'
import { Browser, LoginApp, REDIRECT_URI, prepareSignIn, signIn } from '../support/sign-in.js'

forEachDialect((dialect) => {
  const h = useHerald(dialect)

  async function relyingParty(client: Record<string, unknown> = {}) {
    const account = await createAccount(h.current)
    const rp = await prepareSignIn(account, client)
    const config = await oidc.discovery(new URL(account.issuer), rp.clientId, undefined, oidc.ClientSecretBasic(rp.clientSecret), { execute: [oidc.allowInsecureRequests] })
    return { account, rp, config, app: await LoginApp.of(account) }
  }

  function authorizationParameters() {
    const verifier = oidc.randomPKCECodeVerifier()
    return { verifier, state: oidc.randomState(), nonce: oidc.randomNonce() }
  }

  describe('sign-in with openid-client as the relying party', () => {
    it('goes from discovery through login and consent to tokens and userinfo', async () => {
      const { account, config, app } = await relyingParty()
      const metadata = config.serverMetadata()
      expect(metadata.authorization_endpoint).toBe(`${account.issuer}/oauth/authorize`)
      expect(metadata.response_types_supported).toEqual(['code'])
      expect(metadata.code_challenge_methods_supported).toEqual(['S256'])
      expect(metadata.authorization_response_iss_parameter_supported).toBe(true)

      const { verifier, state, nonce } = authorizationParameters()
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT_URI,
        scope: 'openid email',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      })
      const browser = new Browser()
      const started = await browser.open(url.href)
      const challenge = new URL(started.location!).searchParams.get('login_challenge')!
      const login = await app.loginRequest(challenge)
      expect(login.body).toMatchObject({ skip: false, subject: null, requested_scope: ['openid', 'email'], client: { client_id: config.clientMetadata().client_id, client_name: 'Relying party' } })
      const back = await browser.open(await app.accept('login', challenge, { subject: 'user-1', acr: 'urn:example:mfa', amr: ['pwd', 'otp'] }))
      const consent = new URL(back.location!).searchParams.get('consent_challenge')!
      expect((await app.consentRequest(consent)).body).toMatchObject({ subject: 'user-1', skip: false, requested_scope: ['openid', 'email'] })
      const returned = await browser.open(await app.accept('consent', consent, { grant_scope: ['openid', 'email'], session: { id_token: { email: 'ada@example.com', email_verified: true } } }))
      const callback = new URL(returned.location!)
      expect(callback.searchParams.get('iss')).toBe(account.issuer)

      const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce })
      expect(tokens.scope).toBe('openid email')
      const claims = tokens.claims()!
      expect(claims).toMatchObject({ iss: account.issuer, sub: 'user-1', aud: config.clientMetadata().client_id, azp: config.clientMetadata().client_id, nonce, acr: 'urn:example:mfa', amr: ['pwd', 'otp'], email: 'ada@example.com' })
      expect(typeof claims.sid).toBe('string')
      expect(typeof claims.auth_time).toBe('number')
      expect(decodeProtectedHeader(tokens.id_token!).alg).toBe('RS256')

      const jwks = createRemoteJWKSet(new URL(metadata.jwks_uri!))
      const access = await jwtVerify(tokens.access_token, jwks, { issuer: account.issuer, typ: 'at+jwt', currentDate: new Date(h.current.clock.now()) })
      expect(access.payload).toMatchObject({ sub: 'user-1', client_id: config.clientMetadata().client_id, scope: 'openid email' })

      const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, 'user-1')
      expect(userinfo).toEqual({ sub: 'user-1', email: 'ada@example.com', email_verified: true })
    })

    it('does the same through a pushed authorization request', async () => {
      const { account, config, app } = await relyingParty()
      const { verifier, state, nonce } = authorizationParameters()
      const url = await oidc.buildAuthorizationUrlWithPAR(config, {
        redirect_uri: REDIRECT_URI,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      })
      expect(url.searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:/)
      const callback = await signIn(new Browser(), app, url.href, 'user-2')
      expect(callback.searchParams.get('iss')).toBe(account.issuer)
      const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce })
      expect(tokens.claims()?.sub).toBe('user-2')

      // RFC 9126 §4: a request_uri serves once.
      const again = await new Browser().open(url.href)
      expect(again.status).toBe(400)
      expect(again.text).toMatch(/invalid_request_uri/)
    })

    it('skips the login form in a browser with a remembered session, keeping its auth_time', async () => {
      const { config, app } = await relyingParty()
      const browser = new Browser()
      const first = authorizationParameters()
      const authorize = async (params: ReturnType<typeof authorizationParameters>) =>
        oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(params.verifier), code_challenge_method: 'S256', state: params.state, nonce: params.nonce })
      const firstCallback = await signIn(browser, app, (await authorize(first)).href, 'user-3')
      const firstTokens = await oidc.authorizationCodeGrant(config, firstCallback, { pkceCodeVerifier: first.verifier, expectedState: first.state, expectedNonce: first.nonce })
      expect(browser.cookies.has('herald_session')).toBe(true)

      h.current.clock.advance(5_000)
      const second = authorizationParameters()
      const started = await browser.open((await authorize(second)).href)
      const challenge = new URL(started.location!).searchParams.get('login_challenge')!
      const request = await app.loginRequest(challenge)
      expect(request.body).toMatchObject({ skip: true, subject: 'user-3' })
      expect(request.body.session_id).toBe(firstTokens.claims()?.sid)

      const refused = await app.answer('login', challenge, 'accept', { subject: 'someone-else' })
      expect(refused.status).toBe(400)
      const callback = await signIn(browser, app, (await authorize(second)).href, 'user-3')
      const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: second.verifier, expectedState: second.state, expectedNonce: second.nonce })
      expect(tokens.claims()?.auth_time).toBe(firstTokens.claims()?.auth_time)
      expect(tokens.claims()?.sid).toBe(firstTokens.claims()?.sid)
    })

    it('goes straight to the code for a first-party client, and signs its ID tokens with ES256 when asked', async () => {
      const { config, app } = await relyingParty({ skip_consent: true, id_token_signed_response_alg: 'ES256' })
      const { verifier, state, nonce } = authorizationParameters()
      const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, nonce })
      const browser = new Browser()
      const started = await browser.open(url.href)
      const challenge = new URL(started.location!).searchParams.get('login_challenge')!
      const back = await browser.open(await app.accept('login', challenge, { subject: 'user-4' }))
      expect(back.location).toMatch(REDIRECT_URI)
      // Without `remember`, no session cookie: the next login is not skipped.
      expect(browser.cookies.has('herald_session')).toBe(false)
      const tokens = await oidc.authorizationCodeGrant(config, new URL(back.location!), { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true })
      expect(decodeProtectedHeader(tokens.id_token!).alg).toBe('ES256')
    })
  })
})
