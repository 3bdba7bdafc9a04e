import type { OAuthError} from '../../platform/http/oauth-errors.js';
import { type OAuthErrorCode } from '../../platform/http/oauth-errors.js'
import { audienceProblem } from '../../platform/audience.js'
import type { AccountSettings } from '../../platform/settings/settings.js'
import type { RegisteredClient } from '../clients/client-store.js'
import { grantedScopes } from '../token/scope-policy.js'
import { redirectUriMatches, redirectUriSyntaxProblem } from './redirect-uris.js'

export const RESPONSE_MODES = ['query', 'form_post'] as const
export type ResponseMode = (typeof RESPONSE_MODES)[number]
/** OpenID Connect Core §3.1.2.1; `select_account` is passed on to the login app (request_url), and no login is skipped. */
export const PROMPTS = ['none', 'login', 'consent', 'select_account'] as const
type Prompt = (typeof PROMPTS)[number]

/** An authorization request once validated (RFC 6749 §4.1.1, OpenID Connect Core §3.1.2.1), as a flow stores it. */
export interface AuthorizationRequest {
  /** `device`: a device's request (RFC 8628), whose answer goes to the account's done page, never with a code. */
  flow?: 'device'
  client_id: string
  redirect_uri: string
  response_mode: ResponseMode
  /** The requested scopes, each allowed to the client; none requested means all the client may request. */
  scope: string[]
  state: string | null
  nonce: string | null
  /** RFC 7636 S256 challenge; null only for a confidential client that opted out of PKCE. */
  code_challenge: string | null
  prompt: Prompt[]
  max_age: number | null
  login_hint: string | null
  acr_values: string[]
  ui_locales: string[]
  /** RFC 8707 resource indicators, each one the client registered in its `audience`. */
  resource: string[]
  /** An ID token naming the user the client expects (OpenID Connect Core §3.1.2.1); checked when the flow starts. */
  id_token_hint: string | null
}

/** Where an authorization response (or error) goes once the redirect_uri is trusted. */
export interface ResponseTarget {
  redirectUri: string
  responseMode: ResponseMode
  state: string | null
}

/**
 * An error found before the client and its redirect_uri are known to belong together: it must never be sent to
 * the redirect_uri (RFC 6749 §4.1.2.1, RFC 9700 §4.11), so it goes to the account's error page instead.
 */
export class UntrustedRequestError extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
  ) {
    super(description)
    this.name = 'UntrustedRequestError'
  }
}

/** An error the client learns of through its redirect_uri, with its `state` (RFC 6749 §4.1.2.1). */
export class AuthorizationError extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    readonly target: ResponseTarget,
  ) {
    super(description)
    this.name = 'AuthorizationError'
  }
}

/** Parameters as the query string or form body gives them: a repeated one is an array. */
export type RawParameters = Readonly<Record<string, unknown>>

/** No parameter Herald reads is longer than this; longer ones are garbage or an attack on logs. */
const MAX_PARAMETER_LENGTH = 2048
/** RFC 7636 §4.2: BASE64URL(SHA256(verifier)) is exactly 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/

/** The client and redirect_uri the request names, checked before anything can be sent back to the client. */
export function trustedTarget(params: RawParameters, client: RegisteredClient | undefined): ResponseTarget {
  if (!client) throw new UntrustedRequestError('invalid_request', 'client_id does not name a client of this account')
  const redirectUri = untrustedSingle(params, 'redirect_uri')
  if (redirectUri === undefined) throw new UntrustedRequestError('invalid_request', 'redirect_uri is required (OpenID Connect Core §3.1.2.1)')
  const problem = redirectUriSyntaxProblem(redirectUri)
  if (problem) throw new UntrustedRequestError('invalid_request', `redirect_uri ${problem}`)
  const native = client.metadata.application_type === 'native'
  if (!client.metadata.redirect_uris.some((registered) => redirectUriMatches(registered, redirectUri, native))) {
    throw new UntrustedRequestError('invalid_request', 'redirect_uri is not registered for this client')
  }
  // response_mode decides how even an error is returned, so a bad one falls back to the query (RFC 6749 §4.1.2.1).
  const mode = params.response_mode
  const responseMode = RESPONSE_MODES.find((known) => known === mode) ?? 'query'
  const state = params.state
  return { redirectUri, responseMode, state: typeof state === 'string' && state.length <= MAX_PARAMETER_LENGTH ? state : null }
}

/** A single-valued parameter read before the redirect_uri is trusted. */
export function untrustedSingle(params: RawParameters, name: string): string | undefined {
  const value = params[name]
  if (value === undefined) return undefined
  if (typeof value !== 'string') throw new UntrustedRequestError('invalid_request', `The parameter ${name} is repeated`)
  if (value === '') return undefined
  if (value.length > MAX_PARAMETER_LENGTH) throw new UntrustedRequestError('invalid_request', `The parameter ${name} is too long`)
  return value
}

/**
 * Validates the rest of the request once its target is trusted; every problem is an error for the redirect_uri.
 * Scopes are explicit: one the client may not request is `invalid_scope`, never dropped.
 */
export function validateRequest(params: RawParameters, client: RegisteredClient, target: ResponseTarget, settings: AccountSettings, pushed: boolean): AuthorizationRequest {
  const fail = (code: OAuthErrorCode, description: string): never => {
    throw new AuthorizationError(code, description, target)
  }
  const single = (name: string): string | undefined => {
    try {
      return untrustedSingle(params, name)
    } catch (error) {
      return fail('invalid_request', (error as Error).message)
    }
  }
  const list = (name: string): string[] => single(name)?.split(' ').filter(Boolean) ?? []

  if (!client.grantTypes.has('authorization_code')) fail('unauthorized_client', 'This client may not use the authorization_code grant')
  const state = params.state
  if (state !== undefined && (typeof state !== 'string' || state.length > MAX_PARAMETER_LENGTH)) fail('invalid_request', 'state is repeated or too long')
  // OpenID Connect Core §6.1 and §7.2.1: an OP without request objects or self-issued registration says so.
  if (params.request !== undefined) fail('request_not_supported', 'Request objects are not supported; push the request instead (PAR)')
  if (params.registration !== undefined) fail('registration_not_supported', 'The registration parameter is not supported')
  const responseType = single('response_type')
  if (responseType === undefined) fail('invalid_request', 'response_type is required')
  if (responseType !== 'code') fail('unsupported_response_type', 'Only response_type=code is supported')
  const mode = single('response_mode')
  if (mode !== undefined && !RESPONSE_MODES.some((known) => known === mode)) fail('invalid_request', 'response_mode must be query or form_post')
  if (!pushed && (settings.require_par || client.metadata.require_pushed_authorization_requests)) {
    fail('invalid_request', 'Authorization requests must be pushed first (RFC 9126)')
  }

  let scope: readonly string[] = []
  try {
    scope = grantedScopes(client, single('scope'))
  } catch (error) {
    fail('invalid_scope', (error as OAuthError).description)
  }

  const challenge = single('code_challenge')
  const method = single('code_challenge_method')
  if (challenge === undefined) {
    if (method !== undefined) fail('invalid_request', 'code_challenge_method without a code_challenge')
    if (client.tokenEndpointAuthMethod === 'none' || client.metadata.require_pkce) fail('invalid_request', 'code_challenge is required (PKCE, RFC 7636)')
  } else {
    // RFC 7636 §4.3 makes `plain` the default; Herald accepts S256 only (RFC 9700 §2.1.1).
    if (method !== 'S256') fail('invalid_request', 'code_challenge_method must be S256')
    if (!S256_CHALLENGE.test(challenge)) fail('invalid_request', 'code_challenge is not an S256 challenge')
  }

  const prompt = list('prompt')
  for (const value of prompt) if (!PROMPTS.some((known) => known === value)) fail('invalid_request', `prompt ${value} is not supported`)
  if (prompt.includes('none') && prompt.length > 1) fail('invalid_request', 'prompt=none cannot be combined with other values')

  const maxAgeText = single('max_age')
  if (maxAgeText !== undefined && !/^\d{1,9}$/.test(maxAgeText)) fail('invalid_request', 'max_age must be a number of seconds')

  const resource = resourcesOf(params, client, fail)
  return {
    client_id: client.id,
    redirect_uri: target.redirectUri,
    response_mode: target.responseMode,
    scope: [...scope],
    state: target.state,
    nonce: single('nonce') ?? null,
    code_challenge: challenge ?? null,
    prompt: prompt as Prompt[],
    max_age: maxAgeText === undefined ? null : Number(maxAgeText),
    login_hint: single('login_hint') ?? null,
    acr_values: list('acr_values'),
    ui_locales: list('ui_locales'),
    resource,
    id_token_hint: single('id_token_hint') ?? null,
  }
}

/** RFC 8707 §2: absolute URIs without fragments, each one the client may ask for. */
function resourcesOf(params: RawParameters, client: RegisteredClient, fail: (code: OAuthErrorCode, description: string) => never): string[] {
  const raw = params.resource
  const values = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw]
  if (values.length > 1) fail('invalid_target', 'Only one resource may be requested per authorization')
  for (const value of values) {
    if (typeof value !== 'string' || value.length > MAX_PARAMETER_LENGTH || audienceProblem(value)) fail('invalid_target', 'resource must be an absolute URI')
    if (!client.metadata.audience.includes(value as string)) fail('invalid_target', 'The client may not request this resource')
  }
  return values as string[]
}
