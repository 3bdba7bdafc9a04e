import { canonicalJson } from '../../platform/canonical-json.js'
import type { Clock } from '../../platform/clock.js'
import { constantTimeEqual } from '../../platform/crypto/random.js'
import type { SecretBox } from '../../platform/crypto/secret-box.js'
import type { GuardedEventsSql } from '../../platform/events/sql/guarded-events.js'
import { ProblemError, notFound } from '../../platform/http/problems.js'
import type { ClientStore, RegisteredClient } from '../clients/client-store.js'
import type { ClientSource } from '../../platform/storage/schema.js'
import type { BrowserSessions } from './browser-sessions.js'
import { type Consents, covers } from './consents.js'
import { type AcceptedConsent, type AcceptedLogin, type Flow, type FlowChanges, type FlowStore, type Rejection, secretDigest } from './flow-store.js'
import { withQuery } from './navigation.js'

/** What the login app reads about a login or consent request (Ory Hydra's shape). */
export interface ChallengeView {
  challenge: string
  /** `device`: a device's request (RFC 8628), verified by its user code first. */
  flow: 'authorize' | 'device'
  client: PublicClient
  requested_scope: string[]
  requested_audience: string[]
  skip: boolean
  subject: string | null
  oidc_context: { login_hint: string | null; acr_values: string[]; ui_locales: string[]; max_age: number | null }
  request_url: string
  session_id: string | null
  /** Consent requests only: what the login app passed on when it accepted the login. */
  context?: Record<string, unknown> | null
}

/** A client's public metadata, as a login or consent page may show it. */
export interface PublicClient {
  client_id: string
  client_name: string
  client_uri: string | null
  logo_uri: string | null
  policy_uri: string | null
  tos_uri: string | null
  source: ClientSource
}

export interface LoginAcceptance {
  subject: string
  remember?: boolean
  remember_for?: number
  acr?: string
  amr?: string[]
  context?: Record<string, unknown>
}

export interface ConsentAcceptance {
  grant_scope: string[]
  grant_audience?: string[]
  remember?: boolean
  remember_for?: number
  session?: { id_token?: Record<string, unknown>; access_token?: Record<string, unknown> }
}

type ChallengeKind = 'login' | 'consent'

/** The stage a flow moves to when its challenge is answered; it waits in the stage named after the challenge's kind. */
const ANSWERED = { login: 'login_answered', consent: 'consent_answered' } as const

/**
 * Claims Herald sets itself in ID and access tokens (OpenID Connect Core §2, RFC 9068 §2.2, RFC 7519 §4.1, RFC 8693
 * §4.1), which a consent's session claims may not override.
 */
export const RESERVED_CLAIMS: ReadonlySet<string> = new Set(['iss', 'sub', 'aud', 'exp', 'iat', 'nbf', 'jti', 'auth_time', 'nonce', 'acr', 'amr', 'azp', 'at_hash', 'c_hash', 'sid', 'client_id', 'scope', 'cv', 'gid', 'cnf', 'typ', 'act', 'sjti'])

/**
 * The login app's side of sign-in: it reads a login or consent request by its challenge and accepts or rejects it,
 * receiving the URL to send the browser back to. A challenge is answered once; what the answer decided travels
 * with a single-use verifier that only the browser that started the flow can present (see AuthorizeFlow).
 *
 * The same answer sent again (its reply was lost) gets the same `redirect_to`, as Hydra does: the verifier is made
 * from the flow, its stage and the answer's canonical JSON under the master key (SecretBox.derive), and only its
 * digest is stored, so a re-sent answer makes it again and a different one does not match (409). Once the browser
 * has brought the verifier back, the challenge names nothing any more (404).
 */
export class Challenges {
  constructor(
    private readonly flows: FlowStore,
    private readonly sessions: BrowserSessions,
    private readonly clients: ClientStore,
    private readonly consents: Consents,
    private readonly guardedEvents: GuardedEventsSql,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {}

  async view(accountId: string, issuer: string, kind: ChallengeKind, challenge: string): Promise<ChallengeView> {
    const { flow, client } = await this.#pending(accountId, kind, challenge)
    if (flow.stage === ANSWERED[kind]) throw alreadyAnswered(kind)
    const { request } = flow
    const skip = kind === 'login' ? flow.subject !== null : !request.prompt.includes('consent') && (await this.#remembered(flow))
    return {
      challenge,
      flow: request.flow ?? 'authorize',
      client: publicClient(client),
      requested_scope: request.scope,
      requested_audience: request.resource,
      skip,
      subject: flow.subject,
      oidc_context: { login_hint: request.login_hint, acr_values: request.acr_values, ui_locales: request.ui_locales, max_age: request.max_age },
      request_url: request.flow === 'device' ? `${issuer}/oauth/device` : withQuery(`${issuer}/oauth/authorize`, authorizeParameters(request)),
      session_id: flow.sessionId,
      ...(kind === 'consent' && { context: flow.login?.context ?? null }),
    }
  }

  async acceptLogin(accountId: string, issuer: string, challenge: string, body: LoginAcceptance): Promise<string> {
    const { flow } = await this.#pending(accountId, 'login', challenge)
    if (flow.stage === 'login_answered') return this.#answeredAgain(flow, issuer, 'login', { accept: body })
    if (flow.subject !== null && body.subject !== flow.subject) {
      throw new ProblemError('validation_failed', 'The browser is signed in as another subject: accept with that subject, or reject', [{ pointer: '/body/subject', message: 'must be the subject of the skipped login' }])
    }
    const now = this.clock.now()
    // A skipped login (the browser's session) keeps when and how the user authenticated.
    const session = flow.subject !== null ? flow.login : null
    const login: AcceptedLogin = {
      auth_time: session?.auth_time ?? Math.floor(now / 1000),
      acr: body.acr ?? session?.acr ?? null,
      amr: body.amr ?? session?.amr ?? [],
      remember: body.remember ?? false,
      remember_for: body.remember_for ?? null,
      context: body.context ?? null,
    }
    const event = { client_id: flow.clientId, subject: body.subject, remember: login.remember }
    return this.#answer(flow, issuer, 'login', { accept: body }, { subject: body.subject, login: JSON.stringify(login) }, { type: 'oauth.login.accepted', data: event })
  }

  async acceptConsent(accountId: string, issuer: string, challenge: string, body: ConsentAcceptance): Promise<string> {
    const { flow } = await this.#pending(accountId, 'consent', challenge)
    if (flow.stage === 'consent_answered') return this.#answeredAgain(flow, issuer, 'consent', { accept: body })
    const extraScope = body.grant_scope.filter((scope) => !flow.request.scope.includes(scope))
    const audience = body.grant_audience ?? flow.request.resource
    const extraAudience = audience.filter((value) => !flow.request.resource.includes(value))
    const problems = [
      ...(extraScope.length > 0 ? [{ pointer: '/body/grant_scope', message: `were not requested: ${extraScope.join(' ')}` }] : []),
      ...(extraAudience.length > 0 ? [{ pointer: '/body/grant_audience', message: `were not requested: ${extraAudience.join(' ')}` }] : []),
      ...reservedClaimProblems(body.session?.id_token, 'id_token'),
      ...reservedClaimProblems(body.session?.access_token, 'access_token'),
    ]
    if (problems.length > 0) throw new ProblemError('validation_failed', 'The consent grants what was not requested, or sets claims Herald sets', problems)
    const consent: AcceptedConsent = {
      grant_scope: [...new Set(body.grant_scope)],
      grant_audience: [...new Set(audience)],
      remember: body.remember ?? false,
      remember_for: body.remember_for ?? null,
      session: { id_token: body.session?.id_token ?? {}, access_token: body.session?.access_token ?? {} },
    }
    const event = { client_id: flow.clientId, subject: flow.subject, scope: consent.grant_scope, remember: consent.remember }
    return this.#answer(flow, issuer, 'consent', { accept: body }, { consent: JSON.stringify(consent) }, { type: 'oauth.consent.granted', data: event })
  }

  async reject(accountId: string, issuer: string, kind: ChallengeKind, challenge: string, rejection: Rejection): Promise<string> {
    const { flow } = await this.#pending(accountId, kind, challenge)
    if (flow.stage === ANSWERED[kind]) return this.#answeredAgain(flow, issuer, kind, { reject: rejection })
    const event = { client_id: flow.clientId, subject: flow.subject, error: rejection.error }
    return this.#answer(flow, issuer, kind, { reject: rejection }, { rejection: JSON.stringify(rejection) }, { type: kind === 'login' ? 'oauth.login.rejected' : 'oauth.consent.rejected', data: event })
  }

  /** Whether a consent the user asked to be remembered covers everything the flow requests. */
  async #remembered(flow: Flow): Promise<boolean> {
    const consent = await this.consents.find(flow.accountId, flow.subject ?? '', flow.clientId, this.clock.now())
    return consent !== undefined && covers(consent, flow.request.scope, flow.request.resource)
  }

  /** Records the answer, with its event, and makes the verifier the browser brings back. */
  async #answer(flow: Flow, issuer: string, kind: ChallengeKind, body: AnswerBody, answer: FlowChanges, event: { type: string; data: object }): Promise<string> {
    const now = this.clock.now()
    const [verifier] = this.#verifiers(flow, kind, body)
    const advancing = this.flows.advancing(flow, ANSWERED[kind], { ...answer, handle: secretDigest(verifier!) }, now)
    if (await this.guardedEvents.recordIf(advancing, { accountId: flow.accountId, ...event }, now)) return verifierUrl(issuer, kind, verifier!)
    // Another answer came first: it may have been this same one.
    const answered = await this.flows.byId(flow.accountId, flow.id)
    if (answered?.stage !== ANSWERED[kind]) throw alreadyAnswered(kind)
    return this.#answeredAgain(answered, issuer, kind, body)
  }

  /** A flow answered already: the same `redirect_to` when `body` is the answer it was given, else 409. */
  #answeredAgain(flow: Flow, issuer: string, kind: ChallengeKind, body: AnswerBody): string {
    const handle = flow.handle
    const verifier = handle === null ? undefined : this.#verifiers(flow, kind, body).find((candidate) => constantTimeEqual(secretDigest(candidate), handle))
    if (verifier === undefined) throw alreadyAnswered(kind)
    return verifierUrl(issuer, kind, verifier)
  }

  /** The verifiers `body` makes for the flow's answer, under each master key (the sealing key's first). */
  #verifiers(flow: Flow, kind: ChallengeKind, body: AnswerBody): string[] {
    return this.box.derive(`authorization_flows:${flow.accountId}:${flow.id}:${ANSWERED[kind]}:${canonicalJson(body)}`)
  }

  /**
   * The flow waiting for (or holding) an answer to this challenge: 404 when there is none, it lapsed, or the browser
   * session a skipped login relies on ended meanwhile.
   */
  async #pending(accountId: string, kind: ChallengeKind, challenge: string): Promise<{ flow: Flow; client: RegisteredClient }> {
    const now = this.clock.now()
    const flow = await this.flows.byChallenge(accountId, challenge)
    const what = kind === 'login' ? 'The login request' : 'The consent request'
    if (!flow || (flow.stage !== kind && flow.stage !== ANSWERED[kind]) || flow.expiresAt <= now) throw notFound(what)
    if (flow.sessionId !== null && !(await this.sessions.isLive(accountId, flow.sessionId, now))) throw notFound(what)
    const client = await this.clients.find(accountId, flow.clientId)
    if (!client) throw notFound(what)
    return { flow, client }
  }
}

/** What the login app sent, as the verifier is made from it. */
type AnswerBody = { accept: LoginAcceptance | ConsentAcceptance } | { reject: Rejection }

function verifierUrl(issuer: string, kind: ChallengeKind, verifier: string): string {
  return withQuery(`${issuer}/oauth/authorize`, { [`${kind}_verifier`]: verifier })
}

function alreadyAnswered(kind: ChallengeKind): ProblemError {
  return new ProblemError('conflict', `The ${kind} request was answered already`)
}

function reservedClaimProblems(claims: Record<string, unknown> | undefined, token: string) {
  return Object.keys(claims ?? {})
    .filter((name) => RESERVED_CLAIMS.has(name))
    .map((name) => ({ pointer: `/body/session/${token}/${name}`, message: 'is set by Herald and cannot be given' }))
}

function publicClient(client: RegisteredClient): PublicClient {
  const { client_name, client_uri, logo_uri, policy_uri, tos_uri } = client.metadata
  return { client_id: client.id, client_name, client_uri, logo_uri, policy_uri, tos_uri, source: client.source }
}

/** The request's parameters as a URL would carry them, for the login app's information (`request_url`). */
function authorizeParameters(request: Flow['request']): Record<string, string> {
  const params: Record<string, string> = { response_type: 'code', client_id: request.client_id, redirect_uri: request.redirect_uri }
  if (request.scope.length > 0) params.scope = request.scope.join(' ')
  if (request.state !== null) params.state = request.state
  if (request.nonce !== null) params.nonce = request.nonce
  if (request.prompt.length > 0) params.prompt = request.prompt.join(' ')
  if (request.max_age !== null) params.max_age = String(request.max_age)
  if (request.login_hint !== null) params.login_hint = request.login_hint
  if (request.acr_values.length > 0) params.acr_values = request.acr_values.join(' ')
  if (request.ui_locales.length > 0) params.ui_locales = request.ui_locales.join(' ')
  if (request.resource.length > 0) params.resource = request.resource.join(' ')
  if (request.id_token_hint !== null) params.id_token_hint = request.id_token_hint
  return params
}
