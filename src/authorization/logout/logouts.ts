import type { Kysely } from 'kysely'
import type { Clock } from '../../platform/clock.js'
import { randomToken } from '../../platform/crypto/random.js'
import { ProblemError, notFound } from '../../platform/http/problems.js'
import { newId } from '../../platform/ids.js'
import type { KeyStore } from '../../platform/keys/key-store.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { DB, LogoutRequestsTable } from '../../platform/storage/schema.js'
import { transaction } from '../../platform/storage/transaction.js'
import type { ClientStore } from '../clients/client-store.js'
import { UntrustedRequestError, type RawParameters, untrustedSingle } from '../sign-in/authorization-request.js'
import type { BrowserContext } from '../sign-in/authorize-flow.js'
import type { BrowserSessions } from '../sign-in/browser-sessions.js'
import { SESSION_COOKIE, expired } from '../sign-in/cookies.js'
import { secretDigest } from '../sign-in/flow-store.js'
import { type Navigation, withQuery } from '../sign-in/navigation.js'
import { verifyIdTokenHint } from '../token/id-token-hint.js'

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
 * browser's session; without one, only a valid `id_token_hint` ends it, so another site can't log a user out.
 * The browser then returns to the client's registered `post_logout_redirect_uri`, or gets a plain page.
 */
export class Logouts {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clients: ClientStore,
    private readonly sessions: BrowserSessions,
    private readonly keys: KeyStore,
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
    const session = await this.sessions.find(account.id, context.cookies[SESSION_COOKIE], now)
    const sessionId = session?.id ?? hint?.sessionId ?? null

    if (settings.logout_url === null) {
      if (!hint) throw new UntrustedRequestError('invalid_request', 'id_token_hint is required: the account has no logout_url to confirm a logout')
      if (sessionId !== null) await this.#end(account.id, sessionId, now)
      return done(request, context)
    }
    const challenge = randomToken()
    await forAccount(this.db, account.id)
      .insertInto('logout_requests', {
        id: newId('lo', now),
        client_id: clientId ?? null,
        session_id: sessionId,
        subject: session?.subject ?? hint?.subject ?? null,
        stage: 'waiting',
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
    const row = await this.#waiting(accountId, challenge)
    const request = JSON.parse(row.request) as LogoutRequest
    return { challenge, subject: row.subject, session_id: row.session_id, client_id: row.client_id, ui_locales: request.ui_locales, rp_initiated: true }
  }

  /** The logout app's answer; the browser brings the verifier back to end the session (or not). */
  async answer(accountId: string, issuer: string, challenge: string, accepted: boolean): Promise<string> {
    const row = await this.#waiting(accountId, challenge)
    const verifier = randomToken()
    const now = this.clock.now()
    const result = await forAccount(this.db, accountId)
      .updateTable('logout_requests')
      .set({ stage: accepted ? 'accepted' : 'rejected', handle: secretDigest(verifier), updated_at: now })
      .where('id', '=', row.id)
      .where('stage', '=', 'waiting')
      .executeTakeFirst()
    if (result.numUpdatedRows !== 1n) throw new ProblemError('conflict', 'The logout request was answered already')
    return withQuery(`${issuer}/oauth/logout`, { logout_verifier: verifier })
  }

  /** Back from the logout app: end the session if the logout was accepted, then back to the client. */
  async finish(context: BrowserContext, verifier: string): Promise<Navigation> {
    const { account, now } = context
    const row = await forAccount(this.db, account.id).selectFrom('logout_requests').selectAll().where('handle', '=', secretDigest(verifier)).executeTakeFirst()
    if (!row || (row.stage !== 'accepted' && row.stage !== 'rejected') || row.expires_at <= now) throw new UntrustedRequestError('invalid_request', 'The logout verifier is unknown, used or expired')
    // The verifier is spent with the session's end, or not at all: a failure leaves both for the browser to try again.
    await transaction(this.db, async (tx) => {
      const spent = await forAccount(tx.db, account.id).updateTable('logout_requests').set({ stage: 'done', handle: null, updated_at: now }).where('id', '=', row.id).where('stage', '=', row.stage).executeTakeFirst()
      if (spent.numUpdatedRows !== 1n) throw new UntrustedRequestError('invalid_request', 'The logout verifier is unknown, used or expired')
      if (row.stage === 'accepted' && row.session_id !== null) await this.sessions.end(tx, account.id, { sessionId: row.session_id }, 'logout', now)
    })
    return done(JSON.parse(row.request) as LogoutRequest, context, row.stage === 'accepted')
  }

  async #end(accountId: string, sessionId: string, now: number): Promise<void> {
    await transaction(this.db, (tx) => this.sessions.end(tx, accountId, { sessionId }, 'logout', now))
  }

  async #waiting(accountId: string, challenge: string): Promise<LogoutRequestsTable> {
    const row = await forAccount(this.db, accountId).selectFrom('logout_requests').selectAll().where('challenge', '=', secretDigest(challenge)).executeTakeFirst()
    if (!row || row.expires_at <= this.clock.now() || row.stage === 'done') throw notFound('The logout request')
    if (row.stage !== 'waiting') throw new ProblemError('conflict', 'The logout request was answered already')
    return row
  }
}

/** The logout's end: to the client's page with its state, or a plain page; the session cookie forgotten either way. */
function done(request: LogoutRequest, context: BrowserContext, loggedOut = true): Navigation {
  const cookies = loggedOut && context.cookies[SESSION_COOKIE] !== undefined ? [expired(SESSION_COOKIE)] : []
  if (request.post_logout_redirect_uri === null) return { kind: 'page', text: loggedOut ? 'You are signed out.\n' : 'You are still signed in.\n', cookies }
  const params: Record<string, string> = request.state === null ? {} : { state: request.state }
  return { kind: 'redirect', location: withQuery(request.post_logout_redirect_uri, params), cookies }
}
