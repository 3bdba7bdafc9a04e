import { type Static, Type } from 'typebox'
import type { FieldError } from '../../platform/http/problems.js'
import { LIFETIME_BOUNDS } from '../../platform/settings/settings.js'
import type { ClientKind, TokenEndpointAuthMethod } from '../../platform/storage/schema.js'
import { audienceProblem } from '../../platform/audience.js'
import { LOOPBACK_HOSTS } from '../../platform/app-urls.js'
import { isReservedScope } from '../../platform/management-auth/scopes.js'
import { isValidScopeToken } from '../token/scope-policy.js'
import { redirectUriSyntaxProblem } from '../sign-in/redirect-uris.js'

/** Grant types a client may register. Implicit and password are not offered at all (RFC 9700 §2.1.2, §2.4). */
export const GRANT_TYPES = ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:token-exchange', 'urn:ietf:params:oauth:grant-type:device_code'] as const
export type GrantType = (typeof GRANT_TYPES)[number]
const TOKEN_EXCHANGE: GrantType = 'urn:ietf:params:oauth:grant-type:token-exchange'

export const AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'] as const satisfies readonly TokenEndpointAuthMethod[]

const Url = Type.String({ minLength: 1, maxLength: 2048 })
const optionalLifetime = (name: keyof typeof LIFETIME_BOUNDS) =>
  Type.Union([Type.Integer(LIFETIME_BOUNDS[name]), Type.Null()], { description: "Narrows the account's lifetime for this client, in seconds" })

const JwkSet = Type.Object(
  { keys: Type.Array(Type.Object({ kty: Type.String() }, { additionalProperties: true }), { minItems: 1, maxItems: 20 }) },
  { additionalProperties: false },
)

/** RFC 7591 §2 client metadata, with Herald's extensions (audience, CORS origins, per-client lifetimes). */
export const ClientMetadataFields = {
  client_name: Type.String({ maxLength: 200 }),
  redirect_uris: Type.Array(Url, { maxItems: 50, uniqueItems: true }),
  post_logout_redirect_uris: Type.Array(Url, { maxItems: 50, uniqueItems: true }),
  grant_types: Type.Array(Type.Enum([...GRANT_TYPES]), { minItems: 1, uniqueItems: true }),
  response_types: Type.Array(Type.Enum(['code']), { uniqueItems: true }),
  token_endpoint_auth_method: Type.Enum([...AUTH_METHODS]),
  scope: Type.String({ maxLength: 4096, description: 'Space-separated scopes the client may request; each must exist in the account' }),
  application_type: Type.Enum(['web', 'native']),
  jwks: Type.Union([JwkSet, Type.Null()]),
  jwks_uri: Type.Union([Url, Type.Null()]),
  contacts: Type.Array(Type.String({ maxLength: 320 }), { maxItems: 20 }),
  client_uri: Type.Union([Url, Type.Null()]),
  logo_uri: Type.Union([Url, Type.Null()]),
  policy_uri: Type.Union([Url, Type.Null()]),
  tos_uri: Type.Union([Url, Type.Null()]),
  audience: Type.Array(Url, {
    maxItems: 20,
    uniqueItems: true,
    description: 'Resources (RFC 8707) this client may request tokens for; the first is the default `aud`',
  }),
  allowed_cors_origins: Type.Array(Url, { maxItems: 50, uniqueItems: true }),
  access_token_ttl: optionalLifetime('access_token_ttl'),
  id_token_ttl: optionalLifetime('id_token_ttl'),
  refresh_token_idle_ttl: optionalLifetime('refresh_token_idle_ttl'),
  refresh_token_absolute_ttl: optionalLifetime('refresh_token_absolute_ttl'),
  skip_consent: Type.Boolean({ description: 'A trusted first-party client: sign-in goes on without asking the consent app' }),
  id_token_signed_response_alg: Type.Enum(['RS256', 'ES256'], { description: 'How ID tokens for this client are signed (OpenID Connect Dynamic Registration §2)' }),
  require_pkce: Type.Boolean({ description: 'Authorization requests must carry an S256 code_challenge; only a confidential client may turn it off' }),
  require_pushed_authorization_requests: Type.Boolean({ description: 'Authorization requests must be pushed first (RFC 9126 §6)' }),
  backchannel_logout_uri: Type.Union([Url, Type.Null()], {
    description: 'Where Herald POSTs a logout token when a session the client took part in ends (OpenID Connect Back-Channel Logout 1.0); vetted like a webhook URL',
  }),
  backchannel_logout_session_required: Type.Boolean({ description: 'The logout token must carry `sid`; Herald always sends both `sub` and `sid`' }),
  token_exchange_impersonation: Type.Boolean({
    description: 'Token exchange (RFC 8693) issues this client tokens for the subject without an `act` claim naming it (impersonation), instead of delegation',
  }),
}

export const ClientMetadataSchema = Type.Object(ClientMetadataFields)
export type ClientMetadata = Static<typeof ClientMetadataSchema>

/** What a registration may leave out, and what it then gets (RFC 7591 §2's defaults where it has them). */
export const DEFAULT_METADATA: ClientMetadata = {
  client_name: '',
  redirect_uris: [],
  post_logout_redirect_uris: [],
  grant_types: ['authorization_code'],
  response_types: [],
  token_endpoint_auth_method: 'client_secret_basic',
  scope: '',
  application_type: 'web',
  jwks: null,
  jwks_uri: null,
  contacts: [],
  client_uri: null,
  logo_uri: null,
  policy_uri: null,
  tos_uri: null,
  audience: [],
  allowed_cors_origins: [],
  access_token_ttl: null,
  id_token_ttl: null,
  refresh_token_idle_ttl: null,
  refresh_token_absolute_ttl: null,
  skip_consent: false,
  id_token_signed_response_alg: 'RS256',
  require_pkce: true,
  require_pushed_authorization_requests: false,
  backchannel_logout_uri: null,
  backchannel_logout_session_required: false,
  token_exchange_impersonation: false,
}

export function scopesOf(metadata: Pick<ClientMetadata, 'scope'>): string[] {
  return [...new Set(metadata.scope.split(' ').filter(Boolean))]
}

/** A client allowed any reserved `herald:` scope is a management client. */
export function clientKind(metadata: Pick<ClientMetadata, 'scope'>): ClientKind {
  return scopesOf(metadata).some(isReservedScope) ? 'management' : 'standard'
}

export function usesSecret(method: TokenEndpointAuthMethod): boolean {
  return method === 'client_secret_basic' || method === 'client_secret_post'
}

/**
 * Checks a complete set of metadata for consistency, beyond what the schema can say. Returns every problem at
 * once, each pointing at its field. `knownScopes` are the account's registered scope names.
 */
export interface MetadataPolicy {
  /** `HERALD_WEBHOOK_ALLOW_HTTP`: a plain-http `jwks_uri` or `backchannel_logout_uri` is accepted (tests and development). */
  allowHttpOutbound?: boolean
}

export function metadataProblems(metadata: ClientMetadata, knownScopes: ReadonlySet<string>, policy: MetadataPolicy = {}): FieldError[] {
  const problems: FieldError[] = []
  const problem = (field: string, message: string) => problems.push({ pointer: `/body/${field}`, message })
  const grants = new Set(metadata.grant_types)
  const native = metadata.application_type === 'native'

  metadata.redirect_uris.forEach((uri, index) => {
    const reason = redirectUriProblem(uri, native) ?? responseParameterClash(uri)
    if (reason) problem(`redirect_uris/${index}`, reason)
  })
  metadata.post_logout_redirect_uris.forEach((uri, index) => {
    const reason = redirectUriProblem(uri, native)
    if (reason) problem(`post_logout_redirect_uris/${index}`, reason)
  })
  if (grants.has('authorization_code') && metadata.redirect_uris.length === 0) {
    problem('redirect_uris', 'is required for the authorization_code grant')
  }
  if (grants.has('authorization_code') !== metadata.response_types.includes('code')) {
    problem('response_types', 'must contain "code" exactly when grant_types contains authorization_code (RFC 7591 §2.1)')
  }
  if (grants.has('refresh_token') && !grants.has('authorization_code') && !grants.has('urn:ietf:params:oauth:grant-type:device_code')) {
    problem('grant_types', 'refresh_token is only issued with authorization_code or the device grant')
  }

  const method = metadata.token_endpoint_auth_method
  if (method === 'none' && !metadata.require_pkce) problem('require_pkce', 'a public client (none) must use PKCE (RFC 9700 §2.1.1)')
  if (method === 'none' && grants.has('client_credentials')) {
    problem('token_endpoint_auth_method', 'a public client (none) cannot use client_credentials')
  }
  if (method === 'none' && grants.has(TOKEN_EXCHANGE)) problem('token_endpoint_auth_method', 'a public client (none) cannot use token exchange')
  if (metadata.token_exchange_impersonation && !grants.has(TOKEN_EXCHANGE)) {
    problem('token_exchange_impersonation', `needs the ${TOKEN_EXCHANGE} grant`)
  }
  if (metadata.jwks !== null && metadata.jwks_uri !== null) problem('jwks_uri', 'must not be given together with jwks (RFC 7591 §2)')
  if (method === 'private_key_jwt' && metadata.jwks === null && metadata.jwks_uri === null) {
    problem('jwks', 'private_key_jwt needs jwks or jwks_uri')
  }
  for (const field of OUTBOUND_URI_FIELDS) {
    const value = metadata[field]
    const reason = value === null ? undefined : outboundUriProblem(value, policy.allowHttpOutbound ?? false)
    if (reason) problem(field, reason)
  }
  metadata.jwks?.keys.forEach((key, index) => {
    if ('d' in key || 'p' in key || 'k' in key) problem(`jwks/keys/${index}`, 'must be a public key (no private or symmetric members)')
  })

  const scopes = scopesOf(metadata)
  const reserved = scopes.filter(isReservedScope)
  for (const scope of scopes) {
    if (!isValidScopeToken(scope)) problem('scope', `"${scope}" is not a valid scope token (RFC 6749 §3.3)`)
    else if (!isReservedScope(scope) && !knownScopes.has(scope)) problem('scope', `${scope} does not exist in this account`)
  }
  if (reserved.length > 0) {
    const unknown = reserved.filter((scope) => !knownScopes.has(scope))
    if (unknown.length > 0) problem('scope', `unknown reserved scope: ${unknown.join(' ')}`)
    if (metadata.grant_types.some((grant) => grant !== 'client_credentials')) {
      problem('grant_types', 'a management client (herald: scopes) may only use client_credentials')
    }
    if (!usesSecret(method) && method !== 'private_key_jwt') problem('token_endpoint_auth_method', 'a management client must authenticate')
  }

  for (const field of ['client_uri', 'logo_uri', 'policy_uri', 'tos_uri'] as const) {
    const value = metadata[field]
    if (value !== null && !isHttpsUrl(value)) problem(field, 'must be an https URL')
  }
  metadata.audience.forEach((value, index) => {
    const reason = audienceProblem(value)
    if (reason) problem(`audience/${index}`, reason)
  })
  metadata.allowed_cors_origins.forEach((value, index) => {
    if (!isOrigin(value)) problem(`allowed_cors_origins/${index}`, 'must be an origin: scheme, host and optional port, nothing else')
  })
  metadata.contacts.forEach((value, index) => {
    if (!/^[^\s@]+@[^\s@]+$/.test(value)) problem(`contacts/${index}`, 'must be an email address')
  })
  const idle = metadata.refresh_token_idle_ttl
  const absolute = metadata.refresh_token_absolute_ttl
  if (idle !== null && absolute !== null && absolute < idle) {
    problem('refresh_token_absolute_ttl', 'must not be shorter than refresh_token_idle_ttl')
  }
  return problems
}

/**
 * Why a redirect URI is refused, or undefined if it is acceptable: what any redirect URI must be (a valid port, no
 * credentials, no wildcard host: redirectUriSyntaxProblem), no fragment (RFC 6749 §3.1.2), https except on loopback
 * (RFC 8252 §7.3), and private-use schemes in reverse-domain form only for native apps (RFC 8252 §7.1).
 */
export function redirectUriProblem(uri: string, native: boolean): string | undefined {
  const syntax = redirectUriSyntaxProblem(uri)
  if (syntax) return syntax
  const url = new URL(uri)
  if (uri.includes('#')) return 'must not contain a fragment'
  if (url.protocol === 'https:') return undefined
  if (url.protocol === 'http:') return LOOPBACK_HOSTS.has(url.hostname) ? undefined : 'must use https unless the host is loopback'
  if (!native) return 'a private-use scheme is allowed only for native apps (application_type native)'
  // RFC 8252 §7.1: a reverse domain name with at least one dot, so schemes of unrelated apps don't collide.
  if (!/^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(url.protocol)) return 'a private-use scheme must be a reverse domain name, such as com.example.app'
  if (['javascript:', 'data:', 'file:', 'vbscript:'].includes(url.protocol)) return 'this scheme is never allowed'
  return undefined
}

/** The parameters an authorization response adds: a redirect URI whose query had them would carry two of each. */
const RESPONSE_PARAMETERS = ['code', 'state', 'iss', 'error', 'error_description']

function responseParameterClash(uri: string): string | undefined {
  const present = RESPONSE_PARAMETERS.filter((name) => new URL(uri).searchParams.has(name))
  return present.length > 0 ? `must not have the authorization response's parameters in its query: ${present.join(', ')}` : undefined
}

/** The URLs Herald itself calls: each is vetted like a webhook URL (see Clients). */
export const OUTBOUND_URI_FIELDS = ['jwks_uri', 'backchannel_logout_uri'] as const

/** Why a URL Herald will call is refused, or undefined: https only, unless the operator allowed plain http for outbound requests. */
export function outboundUriProblem(uri: string, allowHttp: boolean): string | undefined {
  if (isHttpsUrl(uri)) return undefined
  if (allowHttp && isHttpUrl(uri)) return undefined
  return allowHttp ? 'must be an http or https URL without a fragment' : 'must be an https URL'
}

function isHttpUrl(value: string): boolean {
  try {
    return new URL(value).protocol === 'http:' && !value.includes('#')
  } catch {
    return false
  }
}

function isHttpsUrl(value: string): boolean {
  try {
    const url = new URL(value)
    return url.protocol === 'https:' && !value.includes('#')
  } catch {
    return false
  }
}

function isOrigin(value: string): boolean {
  try {
    const url = new URL(value)
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value
  } catch {
    return false
  }
}
