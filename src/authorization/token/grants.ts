import type { Account } from '../../platform/accounts/accounts.js'
import type { JwtSigner } from '../../platform/keys/material.js'
import type { AccountSettings } from '../../platform/settings/settings.js'
import type { RegisteredClient } from '../clients/client-store.js'
import { issueAccessToken, jsonString } from './access-token.js'
import { accessTokenAudience } from './audience-policy.js'
import { grantedScopes } from './scope-policy.js'
import type { TokenRequestBody } from './token-request.js'

/** Everything a grant needs, gathered by the endpoint from the caches: a grant does no lookups of its own. */
export interface GrantContext {
  account: Account
  issuer: string
  client: RegisteredClient
  settings: AccountSettings
  /** The account's current key for its access token algorithm. */
  signer: JwtSigner
  body: TokenRequestBody
  resources: readonly string[]
  nowMs: number
}

/** RFC 6749 §5.1, and OpenID Connect Core §3.1.3.3's `id_token` */
export interface TokenResponse {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
  scope: string
  refresh_token?: string
  id_token?: string
  /** RFC 8693 §2.2.1: what a token exchange issued. */
  issued_token_type?: string
}

/**
 * A token response as JSON text, written out directly instead of by the route's response serializer, which
 * would scan the ~600-character token for characters to escape on every request although none can occur there:
 * the token is base64url segments joined by dots (signJwt), token_type a constant and expires_in an integer. The
 * scope is escaped like any string, though scope-tokens (RFC 6749 §3.3) can't hold anything that needs it.
 */
export function tokenResponseJson(response: TokenResponse): string {
  // The refresh token is base64url (RefreshTokens), the ID token a JWS like the access token.
  const refreshToken = response.refresh_token === undefined ? '' : `,"refresh_token":"${response.refresh_token}"`
  const idToken = response.id_token === undefined ? '' : `,"id_token":"${response.id_token}"`
  const issuedType = response.issued_token_type === undefined ? '' : `,"issued_token_type":${jsonString(response.issued_token_type)}`
  return `{"access_token":"${response.access_token}","token_type":"${response.token_type}","expires_in":${response.expires_in},"scope":${jsonString(response.scope)}${refreshToken}${idToken}${issuedType}}`
}

export type GrantHandler = (context: GrantContext) => Promise<TokenResponse> | TokenResponse

/** RFC 6749 §4.4: the client acts on its own behalf, so it is the token's subject. */
export function clientCredentialsGrant(context: GrantContext): TokenResponse {
  const { client, settings, issuer } = context
  const scopes = grantedScopes(client, context.body.scope)
  // Arguments are built field by field: spreading the whole context per request measurably slows the hot path.
  const audience = accessTokenAudience({ client, settings, issuer, scopes, resources: context.resources })
  const scope = scopes.join(' ')
  const { token, expiresIn } = issueAccessToken({ issuer, subject: client.id, client, audience, scope, settings, signer: context.signer, nowMs: context.nowMs })
  return { access_token: token, token_type: 'Bearer', expires_in: expiresIn, scope }
}

/** The grant types the token endpoint implements, as discovery lists them. */
export const GRANT_TYPES_SUPPORTED = ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:token-exchange', 'urn:ietf:params:oauth:grant-type:device_code'] as const

/** The grant handlers by `grant_type` value. */
export type Grants = Readonly<Record<(typeof GRANT_TYPES_SUPPORTED)[number], GrantHandler>>
