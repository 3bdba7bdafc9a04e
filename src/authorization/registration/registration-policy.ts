import type { FieldError } from '../../platform/http/problems.js'
import { isReservedScope } from '../../platform/management-auth/scopes.js'
import type { RegistrationMode } from '../../platform/storage/schema.js'
import { LOOPBACK_HOSTS } from '../../platform/app-urls.js'
import { type ClientMetadata, DEFAULT_METADATA, type GrantType, scopesOf } from '../clients/client-metadata.js'

/** The most a registered client may ask for: the account's policy, narrowed by the initial access token it used. */
export interface RegistrationCeiling {
  scopes: readonly string[]
  grantTypes: readonly GrantType[]
}

/** What an initial access token narrows the policy to; null leaves the policy as it is. */
export interface TokenLimits {
  scope: string | null
  grantTypes: readonly GrantType[] | null
}

export interface RegistrationPolicy {
  registration_scope: string
  registration_grant_types: readonly GrantType[]
}

/**
 * The ceiling of one registration. Reserved `herald:` scopes never pass, whatever the settings say; in `open` mode,
 * where anyone may register, neither do client_credentials, which would let a stranger get tokens with no user, and
 * token exchange, which would let a stranger turn a user's token into one of its own.
 */
/** Grant types an anonymous registration never gets (see registrationCeiling). */
const NEVER_OPEN: ReadonlySet<GrantType> = new Set(['client_credentials', 'urn:ietf:params:oauth:grant-type:token-exchange'])

export function registrationCeiling(policy: RegistrationPolicy, mode: RegistrationMode, token?: TokenLimits): RegistrationCeiling {
  let scopes = policy.registration_scope.split(' ').filter((scope) => scope !== '' && !isReservedScope(scope))
  let grantTypes = [...policy.registration_grant_types]
  if (token?.scope != null) {
    const allowed = new Set(token.scope.split(' '))
    scopes = scopes.filter((scope) => allowed.has(scope))
  }
  if (token?.grantTypes != null) {
    const allowed = new Set(token.grantTypes)
    grantTypes = grantTypes.filter((grant) => allowed.has(grant))
  }
  if (mode === 'open' && token === undefined) grantTypes = grantTypes.filter((grant) => !NEVER_OPEN.has(grant))
  return { scopes: [...new Set(scopes)], grantTypes }
}

/** Both ceilings at once: what a registered client's update may ask for, under its own ceiling and the policy as it is now. */
export function narrowedCeiling(a: RegistrationCeiling, b: RegistrationCeiling): RegistrationCeiling {
  return { scopes: a.scopes.filter((scope) => b.scopes.includes(scope)), grantTypes: a.grantTypes.filter((grant) => b.grantTypes.includes(grant)) }
}

/**
 * Metadata only the account itself may give a client, through the management API: a registration must leave each
 * at its default. A trusted first party skips consent; audiences name resource servers that trust the account's
 * tokens; impersonation (RFC 8693) speaks as the user.
 */
const PRIVILEGED_FIELDS = ['skip_consent', 'audience', 'token_exchange_impersonation'] as const satisfies ReadonlyArray<keyof ClientMetadata>

/**
 * A registration's metadata (RFC 7591 §2), with the defaults RFC 7591 gives what it leaves out: the code response
 * type for the authorization_code grant, and here the ceiling's scopes when it names none. RFC 7592 §2.2: an update
 * replaces the whole registration, so what it leaves out takes these same defaults.
 */
export function registrationMetadata(input: Partial<ClientMetadata>, ceiling: RegistrationCeiling): ClientMetadata {
  const grantTypes = input.grant_types ?? DEFAULT_METADATA.grant_types
  return {
    ...DEFAULT_METADATA,
    scope: ceiling.scopes.join(' '),
    response_types: grantTypes.includes('authorization_code') ? ['code'] : [],
    ...input,
  }
}

/** Why the metadata goes beyond what registration may give, each pointing at its field; empty when it does not. */
export function registrationPolicyProblems(metadata: ClientMetadata, ceiling: RegistrationCeiling): FieldError[] {
  const problems: FieldError[] = []
  const problem = (field: string, message: string) => problems.push({ pointer: `/body/${field}`, message })
  for (const scope of scopesOf(metadata)) {
    if (isReservedScope(scope)) problem('scope', `${scope}: herald: scopes are never given by registration`)
    else if (!ceiling.scopes.includes(scope)) problem('scope', `${scope} is beyond what registration may give (${ceiling.scopes.join(' ') || 'no scopes'})`)
  }
  for (const grant of metadata.grant_types) {
    if (!ceiling.grantTypes.includes(grant)) problem('grant_types', `${grant} is beyond what registration may give (${ceiling.grantTypes.join(' ') || 'no grant types'})`)
  }
  metadata.redirect_uris.forEach((uri, index) => {
    if (!isHttpsOrLoopback(uri)) problem(`redirect_uris/${index}`, 'a registered client may use only https or loopback redirect URIs')
  })
  metadata.post_logout_redirect_uris.forEach((uri, index) => {
    if (!isHttpsOrLoopback(uri)) problem(`post_logout_redirect_uris/${index}`, 'a registered client may use only https or loopback URIs')
  })
  for (const field of PRIVILEGED_FIELDS) {
    if (JSON.stringify(metadata[field]) !== JSON.stringify(DEFAULT_METADATA[field])) problem(field, 'is given only through the management API')
  }
  return problems
}

function isHttpsOrLoopback(uri: string): boolean {
  try {
    const url = new URL(uri)
    return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))
  } catch {
    // Not a URL at all: the metadata's own checks say so.
    return true
  }
}
