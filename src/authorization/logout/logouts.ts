import type { Kysely } from 'kysely'
import type { Clock } from '../../platform/clock.js'
import { constantTimeEqual, randomToken } from '../../platform/crypto/random.js'
import type { SecretBox } from '../../platform/crypto/secret-box.js'
import { ProblemError, notFound } from '../../platform/http/problems.js'
import { newId } from '../../platform/ids.js'
import type { KeyStore } from '../../platform/keys/key-store.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { DB, LogoutRequestsTable } from '../../platform/storage/schema.js'
import { type Tx, transaction } from '../../platform/storage/transaction.js'
import type { ClientStore } from '../clients/client-store.js'
import { UntrustedRequestError, type RawParameters, untrustedSingle } from '../sign-in/authorization-request.js'
import type { BrowserContext } from '../sign-in/authorize-flow.js'
import type { BrowserSessions } from '../sign-in/browser-sessions.js'
import { SESSION_COOKIE, expired } from '../sign-in/cookies.js'
import { secretDigest } from '../sign-in/flow-store.js'
import { type Navigation, withQuery } from '../sign-in/navigation.js'
import { verifyIdTokenHint } from '../token/id-token-hint.js'
import { LOGOUT_FIRST_STAGE, LOGOUT_MOVES, type LogoutStage, advanceLogout } from './logout-stages.js'
import { type LogoutSession, logoutSession } from './logout-session.js'

/** Where the browser goes once the logout is done: the client's registered page, with the request's state. */
interface LogoutRequest {
  post_logout_redirect_uri: string | null
  state: string | null
  ui_locales: string[]
}

export interface LogoutView {
  challenge: string
  subject: string | null
  session_id: string | null
  client_id: string | null
  ui_locales: string[]
  rp_initiated: true
}

/**
 * RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0): a client sends the browser to the logout endpoint;
 * with the account's `logout_url` set, its app confirms through a challenge (as for login) before Herald ends the
 * browser's session; without one, only a valid `id_token_hint` of that session ends it, so another site can't log a
 * user out (see logoutSession). The browser then returns to the client's registered `post_logout_redirect_uri`, or
 * goes to the account's `post_logout_url` (see done).
 */
export class Logouts {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clients: ClientStore,
    private readonly sessions: BrowserSessions,
    private readonly keys: KeyStore,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {}

  async start(context: BrowserContext, params: RawParameters): Promise<Navigation> {
    const { account, issuer, settings, now } = context
    const hintText = untrustedSingle(params, 'id_token_hint')
    const hint = hintText === undefined ? undefined : await verifyIdTokenHint(this.keys, account.id, issuer, hintText, now)
    if (hintText !== undefined && !hint) throw new UntrustedRequestError('invalid_request', 'id_token_hint is not an ID token of this account')
    const clientId = untrustedSingle(params, 'client_id') ?? (hint?.audience.length === 1 ? hint.audience[0] : undefined)
    if (clientId !== undefined && hint && !hint.audience.includes(clientId)) throw new UntrustedRequestError('invalid_request', 'client_id is not the audience of id_token_hint')
    const redirect = untrustedSingle(params, 'post_logout_redirect_uri') ?? null
    if (redirect !== null) {
      const client = clientId === undefined ? undefined : await this.clients.find(account.id, clientId)
      if (!client?.metadata.post_logout_redirect_uris.includes(redirect)) throw new UntrustedRequestError('invalid_request', 'post_logout_redirect_uri is not registered for the client')
    }
    const request: LogoutRequest = { post_logout_redirect_uri: redirect, state: untrustedSingle(params, 'state') ?? null, ui_locales: untrustedSingle(params, 'ui_locales')?.split(' ') ?? [] }
    if (settings.logout_url === null && !hint) throw new UntrustedRequestError('invalid_request', 'id_token_hint is required: the account has no logout_url to confirm a logout')
    const session = logoutSession(await this.sessions.find(account.id, context.cookies[SESSION_COOKIE], now), hint)

    if (settings.logout_url === null) {
      if (session.sessionId !== null) await transaction(this.db, (tx) => this.#end(tx, account.id, session, now))
      return done(request, context)
    }
    const challenge = randomToken()
    await forAccount(this.db, account.id)
      .insertInto('logout_requests', {
        id: newId('lo', now),
        client_id: clientId ?? null,
        session_id: session.sessionId,
        subject: session.subject,
        stage: LOGOUT_FIRST_STAGE,
        request: JSON.stringify(request),
        challenge: secretDigest(challenge),
        handle: null,
        expires_at: now + settings.login_challenge_ttl * 1000,
        created_at: now,
        updated_at: now,
      })
      .execute()
    return { kind: 'redirect', location: withQuery(settings.logout_url, { logout_challenge: challenge }), cookies: [] }
  }

  async view(accountId: string, challenge: string): Promise<LogoutView> {
    const row = await this.#unfinished(accountId, challenge)
    if (row.stage !== LOGOUT_FIRST_STAGE) throw answeredAlready()
    const request = JSON.parse(row.request) as LogoutRequest
    return { challenge, subject: row.subject, session_id: row.session_id, client_id: row.client_id, ui_locales: request.ui_locales, rp_initiated: true }
  }

  /**
   * The logout app's answer; the browser brings the verifier back to end the session (or not). The verifier is made
   * from the request's identity with the master key (SecretBox.derive) and only its digest is stored, so the same
   * answer sent again, after the reply to the first was lost, gets the same `redirect_to`; another answer is refused.
   */
  async answer(accountId: string, issuer: string, challenge: string, accepted: boolean): Promise<string> {
    const to: LogoutStage = accepted ? 'accepted' : 'rejected'
    let row = await this.#unfinished(accountId, challenge)
    if (row.stage === LOGOUT_FIRST_STAGE) {
      const [verifier] = this.box.derive(verifierContext(accountId, row.id))
      if (await advanceLogout(this.db, accountId, row, to, { handle: secretDigest(verifier!), updated_at: this.clock.now() })) return finishUrl(issuer, verifier!)
      // Another answer came first: it may have been this same one.
      row = await this.#unfinished(accountId, challenge)
    }
    const given = row.stage === to ? this.#verifierOf(accountId, row) : undefined
    if (given === undefined) throw answeredAlready()
    return finishUrl(issuer, given)
  }

  /** Back from the logout app: end the session if the logout was accepted, then back to the client. */
  async finish(context: BrowserContext, verifier: string): Promise<Navigation> {
    const { account, now } = context
    const row = await forAccount(this.db, account.id).selectFrom('logout_requests').selectAll().where('handle', '=', secretDigest(verifier)).executeTakeFirst()
    if (!row || !LOGOUT_MOVES.canMove(row.stage, 'done') || row.expires_at <= now) throw unknownVerifier()
    // The verifier is spent with the session's end, or not at all: a failure leaves both for the browser to try again.
    await transaction(this.db, async (tx) => {
      if (!(await advanceLogout(tx.db, account.id, row, 'done', { handle: null, updated_at: now }))) throw unknownVerifier()
      if (row.stage === 'accepted') await this.#end(tx, account.id, { sessionId: row.session_id, subject: row.subject }, now)
    })
    return done(JSON.parse(row.request) as LogoutRequest, context, row.stage === 'accepted')
  }

  async #end(tx: Tx, accountId: string, session: LogoutSession, now: number): Promise<void> {
    if (session.sessionId === null || session.subject === null) return
    await this.sessions.end(tx, accountId, { sessionId: session.sessionId, subject: session.subject }, 'logout', now)
  }

  /** The verifier the answer in `row` gave, made again; none if the master key that made it is gone. */
  #verifierOf(accountId: string, row: LogoutRequestsTable): string | undefined {
    const { handle } = row
    if (handle === null) return undefined
    return this.box.derive(verifierContext(accountId, row.id)).find((verifier) => constantTimeEqual(secretDigest(verifier), handle))
  }

  /** The request the challenge names, unless it expired or its logout is done. */
  async #unfinished(accountId: string, challenge: string): Promise<LogoutRequestsTable> {
    const row = await forAccount(this.db, accountId).selectFrom('logout_requests').selectAll().where('challenge', '=', secretDigest(challenge)).executeTakeFirst()
    if (!row || row.expires_at <= this.clock.now() || row.stage === 'done') throw notFound('The logout request')
    return row
  }
}

function verifierContext(accountId: string, requestId: string): string {
  return `logout_requests:${accountId}:${requestId}:verifier`
}

function finishUrl(issuer: string, verifier: string): string {
  return withQuery(`${issuer}/oauth/logout`, { logout_verifier: verifier })
}

function answeredAlready(): ProblemError {
  return new ProblemError('conflict', 'The logout request was answered already')
}

function unknownVerifier(): UntrustedRequestError {
  return new UntrustedRequestError('invalid_request', 'The logout verifier is unknown, used or expired')
}

/**
 * The logout's end, whatever the logout app answered: to the client's page with its state; else to the account's
 * `post_logout_url` (Ory Hydra's `urls.post_logout_redirect`); else, with nowhere of the account's to go, a page of
 * Herald's saying how it ended. The session cookie is forgotten when the session ended.
 */
function done(request: LogoutRequest, context: BrowserContext, loggedOut = true): Navigation {
  const cookies = loggedOut && context.cookies[SESSION_COOKIE] !== undefined ? [expired(SESSION_COOKIE)] : []
  if (request.post_logout_redirect_uri !== null) {
    const params: Record<string, string> = request.state === null ? {} : { state: request.state }
    return { kind: 'redirect', location: withQuery(request.post_logout_redirect_uri, params), cookies }
  }
  const { post_logout_url: accountPage } = context.settings
  if (accountPage !== null) return { kind: 'redirect', location: accountPage, cookies }
  return loggedOut ? { kind: 'page', title: 'Signed out', text: 'You are signed out.', cookies } : { kind: 'page', title: 'Still signed in', text: 'You are still signed in.', cookies }
}
