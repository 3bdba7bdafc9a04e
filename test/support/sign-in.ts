import { createHash } from 'node:crypto'
import * as oidc from 'openid-client'
import { expect } from 'vitest'
import type { CreatedAccount, TestHerald } from './herald.js'
import { basicAuth, call, createAccount, managementToken } from './http.js'

/** The account's login and consent app, as Herald sees it: pages it never fetches, only sends browsers to. */
export const LOGIN_URL = 'https://login.example/login'
export const CONSENT_URL = 'https://login.example/consent'
export const REDIRECT_URI = 'http://127.0.0.1:9/callback'

/** A fixed PKCE pair (RFC 7636), for tests that drive the flow by hand rather than through openid-client. */
export const PKCE_VERIFIER = 'a'.repeat(43)
export const PKCE_CHALLENGE = createHash('sha256').update(PKCE_VERIFIER).digest('base64url')

/** An authorization request of `clientId` to REDIRECT_URI with the fixed PKCE challenge; `params` add or override. */
export function authorizationUrl(base: string, clientId: string, params: Record<string, string> = {}): string {
  const query = { response_type: 'code', client_id: clientId, redirect_uri: REDIRECT_URI, scope: 'openid', code_challenge: PKCE_CHALLENGE, code_challenge_method: 'S256', ...params }
  return `${base}/oauth/authorize?${new URLSearchParams(query)}`
}

/** Redeems the code of a callback with the fixed PKCE verifier, as the relying party would. */
export async function redeemCode<T = Record<string, unknown>>(base: string, client: SignInClient, callback: URL) {
  return call<T>(`${base}/oauth/tokens`, 'POST', {
    headers: { authorization: basicAuth(client.clientId, client.clientSecret) },
    form: { grant_type: 'authorization_code', code: callback.searchParams.get('code') ?? '', redirect_uri: REDIRECT_URI, code_verifier: PKCE_VERIFIER },
  })
}

export interface SignInClient {
  clientId: string
  clientSecret: string
}

/** Points the account at the (pretend) login app and registers a relying party; answers the RP's credentials. */
export async function prepareSignIn(account: CreatedAccount, client: Record<string, unknown> = {}): Promise<SignInClient> {
  const token = await managementToken(account)
  const settings = await call(`${account.base}/settings`, 'PATCH', { token, json: { login_url: LOGIN_URL, consent_url: CONSENT_URL } })
  expect(settings.status, settings.text).toBe(200)
  const created = await call<{ client_id: string; client_secret: string }>(`${account.base}/oauth/clients`, 'POST', {
    token,
    json: { client_name: 'Relying party', redirect_uris: [REDIRECT_URI], grant_types: ['authorization_code'], response_types: ['code'], scope: 'openid profile email', ...client },
  })
  expect(created.status, created.text).toBe(201)
  return { clientId: created.body.client_id, clientSecret: created.body.client_secret }
}

/**
 * A browser, as far as sign-in needs one: it keeps the cookies Herald sets and follows no redirect by itself, so a
 * test sees (and checks) every hop.
 */
export class Browser {
  readonly cookies = new Map<string, string>()

  /** Opens `url`; answers the status and the Location it was sent to, if any. */
  async open(url: string, init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<{ status: number; location: string | null; text: string; headers: Headers }> {
    const headers: Record<string, string> = { ...init.headers }
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ')
    let body: string | undefined
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded'
      body = new URLSearchParams(init.form).toString()
    }
    const response = await fetch(url, { method: init.method ?? 'GET', headers, body, redirect: 'manual' })
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const separator = pair!.indexOf('=')
      this.cookies.set(pair!.slice(0, separator), pair!.slice(separator + 1))
    }
    return { status: response.status, location: response.headers.get('location'), text: await response.text(), headers: response.headers }
  }
}

/** The account's login app, answering challenges through the management API with a `herald:login` token. */
export class LoginApp {
  private constructor(
    private readonly account: CreatedAccount,
    private readonly token: string,
  ) {}

  static async of(account: CreatedAccount): Promise<LoginApp> {
    return new LoginApp(account, await managementToken(account, 'herald:login'))
  }

  async loginRequest(challenge: string) {
    return call<Record<string, unknown> & { skip: boolean; subject: string | null }>(`${this.account.base}/oauth/login-requests/${encodeURIComponent(challenge)}`, 'GET', { token: this.token })
  }

  async consentRequest(challenge: string) {
    return call<Record<string, unknown> & { skip: boolean; requested_scope: string[] }>(`${this.account.base}/oauth/consent-requests/${encodeURIComponent(challenge)}`, 'GET', { token: this.token })
  }

  async answer(kind: 'login' | 'consent', challenge: string, verb: 'accept' | 'reject', json: unknown) {
    return call<{ redirect_to: string }>(`${this.account.base}/oauth/${kind}-requests/${encodeURIComponent(challenge)}/${verb}`, 'POST', { token: this.token, json })
  }

  /** Accepts and answers where the browser goes next. */
  async accept(kind: 'login' | 'consent', challenge: string, json: unknown): Promise<string> {
    const answer = await this.answer(kind, challenge, 'accept', json)
    expect(answer.status, answer.text).toBe(200)
    return answer.body.redirect_to
  }
}

/** The challenge in a Location that points at the login or consent app. */
export function challengeIn(location: string | null, kind: 'login' | 'consent'): string {
  expect(location, `a redirect to the ${kind} app`).toMatch(kind === 'login' ? LOGIN_URL : CONSENT_URL)
  const challenge = new URL(location!).searchParams.get(`${kind}_challenge`)
  expect(challenge).toBeTruthy()
  return challenge!
}

/**
 * Drives a browser from an authorization URL to the client's callback: login accepted as `subject`, consent
 * accepted with every requested scope (and `consent`'s extras). Answers the callback URL.
 */
export async function signIn(browser: Browser, app: LoginApp, authorizationUrl: string, subject: string, consent: Record<string, unknown> = {}): Promise<URL> {
  const started = await browser.open(authorizationUrl)
  expect(started.status, started.text).toBe(302)
  const login = challengeIn(started.location, 'login')
  const afterLogin = await browser.open(await app.accept('login', login, { subject, remember: true }))
  expect(afterLogin.status, afterLogin.text).toBe(302)
  const consentChallenge = challengeIn(afterLogin.location, 'consent')
  const request = await app.consentRequest(consentChallenge)
  const callback = await browser.open(await app.accept('consent', consentChallenge, { grant_scope: request.body.requested_scope, ...consent }))
  expect(callback.status, callback.text).toBe(302)
  return new URL(callback.location!)
}

/** A new account ready for sign-ins: its relying party, its login app, and a browser with no cookies yet. */
export interface SignInSetup {
  account: CreatedAccount
  rp: SignInClient
  app: LoginApp
  browser: Browser
}

/** Creates an account and prepares it for sign-ins (prepareSignIn, with `client`'s metadata for the relying party). */
export async function setupSignIn(h: Pick<TestHerald, 'origin'>, client: Record<string, unknown> = {}): Promise<SignInSetup> {
  const account = await createAccount(h)
  const rp = await prepareSignIn(account, client)
  return { account, rp, app: await LoginApp.of(account), browser: new Browser() }
}

/** The relying party as openid-client sees it, from the account's discovery document. */
export function discoverClient({ account, rp }: Pick<SignInSetup, 'account' | 'rp'>): Promise<oidc.Configuration> {
  return oidc.discovery(new URL(account.issuer), rp.clientId, undefined, oidc.ClientSecretBasic(rp.clientSecret), { execute: [oidc.allowInsecureRequests] })
}

export type ClientTokens = oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers

/** A sign-in that openid-client started, at the client's callback: `redeem` gets its tokens, checked by openid-client. */
export interface ClientSignIn {
  browser: Browser
  /** The authorization request, to send again (with prompt=none, say). */
  url: URL
  callback: URL
  redeem: () => Promise<ClientTokens>
}

/**
 * Signs `subject` in, in `browser` (by default one of its own), to the relying party `config` describes, as
 * openid-client asks for it (PKCE, a nonce and a state): login and consent accepted, with `consent`'s extras.
 */
export async function signInThroughClient(
  config: oidc.Configuration,
  app: LoginApp,
  subject: string,
  { scope = 'openid', consent = {}, browser = new Browser() }: { scope?: string; consent?: Record<string, unknown>; browser?: Browser } = {},
): Promise<ClientSignIn> {
  const verifier = oidc.randomPKCECodeVerifier()
  const nonce = oidc.randomNonce()
  const state = oidc.randomState()
  const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, scope, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', nonce, state })
  const callback = await signIn(browser, app, url.href, subject, consent)
  return { browser, url, callback, redeem: () => oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state }) }
}

/** A relying party allowed refresh tokens, and user-1 signed in to it with `offline_access`: its first tokens. */
export async function signedInOffline(h: Pick<TestHerald, 'origin'>): Promise<SignInSetup & { config: oidc.Configuration; tokens: ClientTokens; refreshToken: string }> {
  const setup = await setupSignIn(h, { grant_types: ['authorization_code', 'refresh_token'], scope: 'openid offline_access' })
  const config = await discoverClient(setup)
  const tokens = await (await signInThroughClient(config, setup.app, 'user-1', { scope: 'openid offline_access' })).redeem()
  expect(tokens.refresh_token).toBeTruthy()
  return { ...setup, config, tokens, refreshToken: tokens.refresh_token! }
}
