import { type JwtSigner, signJwt } from '../../platform/keys/material.js'
import { sha256 } from '../../platform/crypto/random.js'
import { narrowedLifetime } from './access-token.js'
import type { AccountSettings } from '../../platform/settings/settings.js'
import type { RegisteredClient } from '../clients/client-store.js'

export interface IdTokenInput {
  issuer: string
  client: RegisteredClient
  subject: string
  /** The session's authentication (OpenID Connect Core §2), `authTime` in seconds. */
  authTime: number
  acr: string | null
  amr: readonly string[]
  sessionId: string | null
  nonce: string | null
  /** The access token issued with it, for `at_hash`. */
  accessToken: string
  /** Claims the consent gave for the ID token; none of them is one Herald sets (checked at consent). */
  claims: Readonly<Record<string, unknown>>
  settings: AccountSettings
  signer: JwtSigner
  nowMs: number
}

/** The ID token lifetime: the account's, narrowed by the client's. */
export function idTokenLifetime(settings: AccountSettings, client: RegisteredClient): number {
  return narrowedLifetime(settings.id_token_ttl, client.metadata.id_token_ttl)
}

/**
 * An ID token (OpenID Connect Core §2 and §3.1.3.6) for the client, signed with the account's key for the client's
 * `id_token_signed_response_alg`.
 */
export function issueIdToken(input: IdTokenInput): string {
  const iat = Math.floor(input.nowMs / 1000)
  const claims = {
    ...input.claims,
    iss: input.issuer,
    sub: input.subject,
    aud: input.client.id,
    exp: iat + idTokenLifetime(input.settings, input.client),
    iat,
    auth_time: input.authTime,
    ...(input.nonce !== null && { nonce: input.nonce }),
    ...(input.acr !== null && { acr: input.acr }),
    ...(input.amr.length > 0 && { amr: input.amr }),
    azp: input.client.id,
    at_hash: atHash(input.accessToken),
    ...(input.sessionId !== null && { sid: input.sessionId }),
  }
  return signJwt(input.signer, 'JWT', JSON.stringify(claims))
}

/**
 * OpenID Connect Core §3.1.3.6: the left half of the access token's hash, with the hash of the ID token's
 * algorithm; RS256 and ES256 both use SHA-256.
 */
function atHash(accessToken: string): string {
  return sha256(accessToken).subarray(0, 16).toString('base64url')
}
