import type { Kysely } from 'kysely'
import type { Account } from '../../platform/accounts/accounts.js'
import { constantTimeEqual, randomToken } from '../../platform/crypto/random.js'
import { newId } from '../../platform/ids.js'
import type { AccountSettings } from '../../platform/settings/settings.js'
import type { DB } from '../../platform/storage/schema.js'
import { transaction } from '../../platform/storage/transaction.js'
import type { KeyStore } from '../../platform/keys/key-store.js'
import type { ClientStore, RegisteredClient } from '../clients/client-store.js'
import { verifyIdTokenHint } from '../token/id-token-hint.js'
import { type AuthorizationRequest, AuthorizationError, type ResponseTarget, UntrustedRequestError } from './authorization-request.js'
import { type BrowserSession, type BrowserSessions, newSessionId } from './browser-sessions.js'
import { type Consents, covers } from './consents.js'
import { type CookieToSet, SESSION_COOKIE, expired, flowCookie } from './cookies.js'
import { type AcceptedLogin, type Flow, type FlowChanges, type FlowStore, isClosed, secretDigest } from './flow-store.js'
import { type Navigation, toClient, withQuery } from './navigation.js'

/** What every step of a browser's way through authorize knows of its request. */
export interface BrowserContext {
  account: Account
  issuer: string
  settings: AccountSettings
  cookies: Readonly<Record<string, string | undefined>>
  /** The browser's address, as HERALD_TRUSTED_PROXIES lets it be known. */
  address: string
  now: number
}

export function targetOf(request: AuthorizationRequest): ResponseTarget {
  return { redirectUri: request.redirect_uri, responseMode: request.response_mode, state: request.state }
}

/**
 * The browser's side of sign-in (Ory Hydra's model): authorize records the request and sends the browser to the
 * account's login app with a challenge; the app answers the challenge through the management API and sends the
 * browser back with a verifier; consent works the same way; then the client gets its code. Each verifier is
 * single-use and valid only in the browser that started the flow (its flow cookie, see flowCookie).
 */
export class AuthorizeFlow {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly flows: FlowStore,
    private readonly sessions: BrowserSessions,
    private readonly consents: Consents,
    private readonly clients: ClientStore,
    private readonly keys: KeyStore,
  ) {}

  /** A validated request: on to the login app, noting the browser's live session so the app may skip its form. */
  async start(context: BrowserContext, client: RegisteredClient, request: AuthorizationRequest, pushed?: Flow): Promise<Navigation> {
    const { account, settings, now } = context
    let skip: BrowserSession | undefined
    let loginUrl: string
    try {
      if (settings.login_url === null) throw new AuthorizationError('server_error', 'The account has no login_url', targetOf(request))
      if (mayNeedConsent(client, request)) consentApp(settings, request)
      skip = await this.#skippableSession(context, client, request)
      loginUrl = settings.login_url
    } catch (error) {
      // RFC 9126 §4: a request_uri is used once, even when what it asked for can't be done.
      if (pushed) await this.flows.advance(this.db, pushed, 'done', { handle: null }, now)
      throw error
    }

    // One cookie per flow (as Hydra's per-challenge CSRF cookies): flows started side by side in one browser don't
    // overwrite each other's.
    const id = pushed?.id ?? newId('flow', now)
    const browser = randomToken()
    const challenge = randomToken()
    const columns = {
      browser: secretDigest(browser),
      challenge: secretDigest(challenge),
      handle: null,
      subject: skip?.subject ?? null,
      session_id: skip?.id ?? null,
      // A skipped login keeps the session's authentication (OpenID Connect Core §2: auth_time is when the user
      // authenticated, not when the login app last confirmed it).
      login: skip ? JSON.stringify(sessionLogin(skip)) : null,
      expires_at: now + settings.login_challenge_ttl * 1000,
    } as const
    if (pushed) {
      if (!(await this.flows.advance(this.db, pushed, 'login', columns, now))) throw new UntrustedRequestError('invalid_request_uri', 'request_uri was used already')
    } else {
      await this.flows.insert(this.db, account.id, { id, client_id: client.id, stage: 'login', request: JSON.stringify(request), ...columns }, now)
    }
    // It must outlive the login and the consent, each of which may take the challenge's lifetime.
    const cookies = [{ name: flowCookie(id), value: browser, maxAge: 2 * settings.login_challenge_ttl }]
    return { kind: 'redirect', location: withQuery(loginUrl, { login_challenge: challenge }), cookies }
  }

  /**
   * The browser's live session, when the login app may skip its form: not with prompt=login or select_account (the
   * user is to sign in, or to choose an account, again: OpenID Connect Core §3.1.2.1), nor once the user
   * authenticated longer ago than max_age. prompt=none must be answerable without the user, or it is an error.
   */
  async #skippableSession(context: BrowserContext, client: RegisteredClient, request: AuthorizationRequest): Promise<BrowserSession | undefined> {
    const { now } = context
    const target = targetOf(request)
    const hinted = await this.#hintedSubject(context, request)
    const session = await this.sessions.find(context.account.id, context.cookies[SESSION_COOKIE], now)
    const maxAgeMet = (authTime: number) => request.max_age === null || Math.floor(now / 1000) - authTime <= request.max_age
    // A hint for another user than the session's means a new login (OpenID Connect Core §3.1.2.1).
    const sameUser = (subject: string) => hinted === undefined || hinted === subject
    const asked = request.prompt.includes('login') || request.prompt.includes('select_account')
    const skip = session && !asked && maxAgeMet(session.authTime) && sameUser(session.subject) ? session : undefined
    if (!request.prompt.includes('none')) return skip
    if (!skip) throw new AuthorizationError('login_required', 'The user is not signed in', target)
    if (!(await this.#consentSkipped(context.account.id, client, skip.subject, request, now))) {
      throw new AuthorizationError('consent_required', 'The user has not consented to this request', target)
    }
    return skip
  }

  /** The subject an id_token_hint names; a hint that is not this account's ID token is an error for the client. */
  async #hintedSubject(context: BrowserContext, request: AuthorizationRequest): Promise<string | undefined> {
    if (request.id_token_hint === null) return undefined
    const hint = await verifyIdTokenHint(this.keys, context.account.id, context.issuer, request.id_token_hint, context.now)
    if (!hint) throw new AuthorizationError('invalid_request', 'id_token_hint is not an ID token of this account', targetOf(request))
    return hint.subject
  }

  /** Back from the login app: start (or keep) the browser session, then on to consent, or straight to the code. */
  async afterLogin(context: BrowserContext, verifier: string): Promise<Navigation> {
    const { account, settings, now } = context
    const flow = await this.#answered(context, verifier, 'login_answered')
    const target = targetOf(flow.request)
    if (flow.rejection) return this.#reject(flow, target, context)
    const client = await this.#clientOf(flow)
    const login = flow.login
    const subject = flow.subject
    if (!login || subject === null) throw new UntrustedRequestError('invalid_request', 'The login was not accepted')

    const cookies: CookieToSet[] = []
    const newSession = flow.sessionId === null
    const sessionId = flow.sessionId ?? newSessionId(now)
    const lifetime = login.remember_for || settings.session_ttl
    const next = await this.#afterLoginStage(client, flow, subject, now)
    const code = next === 'code' ? randomToken() : undefined
    const challenge = next === 'consent' ? randomToken() : undefined
    // Where the browser goes is settled before anything is written, so a failure leaves nothing behind.
    const consentRedirect = challenge === undefined ? undefined : withQuery(consentApp(settings, flow.request), { consent_challenge: challenge })
    const changes: FlowChanges = {
      session_id: sessionId,
      handle: code === undefined ? null : secretDigest(code),
      challenge: challenge === undefined ? null : secretDigest(challenge),
      ...(next === 'code' && { consent: JSON.stringify(firstPartyConsent(flow.request)) }),
      expires_at: next === 'code' ? codeExpiry(flow, settings, now) : now + settings.login_challenge_ttl * 1000,
    }
    await transaction(this.db, async (tx) => {
      // A skipped login stands on the browser's session: it must still be live (`end` closes its flows too).
      if (!newSession && !(await this.sessions.holdLive(tx, account.id, sessionId, now))) throw sessionEnded(target)
      if (!(await this.flows.advance(tx.db, flow, next, changes, now))) throw usedVerifier()
      if (newSession) {
        const cookie = await this.sessions.create(tx.db, account.id, sessionId, { subject, authTime: login.auth_time, acr: login.acr, amr: login.amr, remembered: login.remember, expiresAt: now + lifetime * 1000 }, now)
        // A new login replaces whatever session the browser had: remembered, or forgotten, so that a later login in
        // this browser can't be skipped as the user who signed in before.
        if (login.remember) cookies.push({ name: SESSION_COOKIE, value: cookie, maxAge: lifetime })
        else if (context.cookies[SESSION_COOKIE] !== undefined) cookies.push(expired(SESSION_COOKIE))
      }
      if (code !== undefined) await this.sessions.join(tx, account.id, sessionId, client, now)
    })
    if (code !== undefined) return toClient(target, context.issuer, codeResponse(flow, code), [...cookies, expired(flowCookie(flow.id))])
    if (consentRedirect === undefined) throw new AuthorizationError('consent_required', 'The user has not consented to this request', target)
    return { kind: 'redirect', location: consentRedirect, cookies }
  }

  /** Back from the consent app: remember the consent if asked, and give the client its code. */
  async afterConsent(context: BrowserContext, verifier: string): Promise<Navigation> {
    const { account, settings, now } = context
    const flow = await this.#answered(context, verifier, 'consent_answered')
    const target = targetOf(flow.request)
    if (flow.rejection) return this.#reject(flow, target, context)
    const consent = flow.consent
    if (!consent || flow.subject === null) throw new UntrustedRequestError('invalid_request', 'The consent was not accepted')
    const code = randomToken()
    const changes = { handle: secretDigest(code), challenge: null, expires_at: codeExpiry(flow, settings, now) }
    const subject = flow.subject
    const client = await this.#clientOf(flow)
    const sessionId = flow.sessionId
    // The code, a consent to remember and the session's new client are written together, on a session still live.
    await transaction(this.db, async (tx) => {
      if (sessionId !== null && !(await this.sessions.holdLive(tx, account.id, sessionId, now))) throw sessionEnded(target)
      if (!(await this.flows.advance(tx.db, flow, 'code', changes, now))) throw usedVerifier()
      if (consent.remember) {
        const remembered = { scope: consent.grant_scope, audience: consent.grant_audience, session: consent.session }
        const expiresAt = consent.remember_for ? now + consent.remember_for * 1000 : null
        await this.consents.remember(tx.db, account.id, subject, flow.clientId, remembered, expiresAt, now)
      }
      if (sessionId !== null) await this.sessions.join(tx, account.id, sessionId, client, now)
    })
    return toClient(target, context.issuer, codeResponse(flow, code), [expired(flowCookie(flow.id))])
  }

  /**
   * What follows an accepted login: the code at once for a first-party client (`skip_consent`), else the consent
   * app, or `consent_required` when the request allowed no interaction and no remembered consent covers it. The
   * account must have a consent app to send the browser to.
   */
  async #afterLoginStage(client: RegisteredClient, flow: Flow, subject: string, now: number): Promise<'code' | 'consent' | 'done'> {
    if (!mayNeedConsent(client, flow.request)) return 'code'
    if (flow.request.prompt.includes('none') && !(await this.#consentSkipped(flow.accountId, client, subject, flow.request, now))) return 'done'
    return 'consent'
  }

  async #consentSkipped(accountId: string, client: RegisteredClient, subject: string, request: AuthorizationRequest, now: number): Promise<boolean> {
    if (client.metadata.skip_consent) return true
    const remembered = await this.consents.find(accountId, subject, client.id, now)
    return remembered !== undefined && covers(remembered, request.scope, request.resource)
  }

  /**
   * The flow a verifier names, if it is at `stage`, unexpired, and in the browser that started it. One closed while
   * the browser was at the app (its session ended, its consent was revoked) ends with an error for the client.
   */
  async #answered(context: BrowserContext, verifier: string, stage: 'login_answered' | 'consent_answered'): Promise<Flow> {
    const flow = await this.flows.byHandle(context.account.id, verifier)
    const closed = flow !== undefined && isClosed(flow)
    if (!flow || (flow.stage !== stage && !closed) || flow.expiresAt <= context.now) throw usedVerifier()
    const browser = context.cookies[flowCookie(flow.id)]
    if (browser === undefined || flow.browser === null || !constantTimeEqual(secretDigest(browser), flow.browser)) {
      throw new UntrustedRequestError('invalid_request', 'This sign-in was started in another browser')
    }
    if (closed) throw sessionEnded(targetOf(flow.request))
    return flow
  }

  async #reject(flow: Flow, target: ResponseTarget, context: BrowserContext): Promise<Navigation> {
    if (!(await this.flows.advance(this.db, flow, 'done', { handle: null, challenge: null }, context.now))) throw usedVerifier()
    const rejection = flow.rejection!
    return toClient(target, context.issuer, { error: rejection.error, error_description: rejection.error_description }, [expired(flowCookie(flow.id))])
  }

  async #clientOf(flow: Flow): Promise<RegisteredClient> {
    const client = await this.clients.find(flow.accountId, flow.clientId)
    if (!client) throw new UntrustedRequestError('invalid_request', 'The client of this sign-in no longer exists')
    return client
  }
}

/**
 * What the browser carries to where the flow ends: the code for a client; nothing for a device flow's done page, as
 * the device redeems the flow with its device code (RFC 8628 §3.4).
 */
function codeResponse(flow: Flow, code: string): Record<string, string> {
  return flow.request.flow === 'device' ? {} : { code }
}

/** A code waits for its client; a device flow's approval, for the device's next poll, as long as its device code lives. */
function codeExpiry(flow: Flow, settings: AccountSettings, now: number): number {
  return now + (flow.request.flow === 'device' ? settings.device_code_ttl : settings.authorization_code_ttl) * 1000
}

function sessionLogin(session: BrowserSession): AcceptedLogin {
  return { auth_time: session.authTime, acr: session.acr, amr: session.amr, remember: true, remember_for: null, context: null }
}

/** Whether the sign-in may go to the consent app: always, unless a first-party client (`skip_consent`) isn't asked to. */
function mayNeedConsent(client: RegisteredClient, request: AuthorizationRequest): boolean {
  return !client.metadata.skip_consent || request.prompt.includes('consent')
}

/** The account's consent app; without one, a sign-in that needs it is refused for the client, before it is written. */
function consentApp(settings: AccountSettings, request: AuthorizationRequest): string {
  if (settings.consent_url === null) throw new AuthorizationError('server_error', 'The account has no consent_url', targetOf(request))
  return settings.consent_url
}

/** The browser's session ended (a logout), or the consent was revoked, while this sign-in waited for the app. */
function sessionEnded(target: ResponseTarget): AuthorizationError {
  return new AuthorizationError('login_required', 'The session ended, or the consent was revoked, during the sign-in', target)
}

function usedVerifier(): UntrustedRequestError {
  return new UntrustedRequestError('invalid_request', 'The verifier is unknown, used or expired')
}

/** A first-party client's grant: everything it asked for, with no claims beyond the login's. */
function firstPartyConsent(request: AuthorizationRequest) {
  return { grant_scope: request.scope, grant_audience: request.resource, remember: false, remember_for: null, session: { id_token: {}, access_token: {} } }
}
