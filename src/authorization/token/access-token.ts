import type { AccountKeys } from '../../platform/keys/key-store.js'
import { signJwt } from '../../platform/keys/material.js'
import { randomUUID } from 'node:crypto'
import { OAuthError } from '../../platform/http/oauth-errors.js'
import type { AccountSettings } from '../../platform/settings/settings.js'
import type { RegisteredClient } from '../clients/client-store.js'

export interface AccessTokenInput {
  issuer: string
  subject: string
  client: RegisteredClient
  audience: string
  /** The granted scopes, space-separated as in the `scope` claim (RFC 9068 §2.2.3). */
  scope: string
  settings: AccountSettings
  keys: AccountKeys | undefined
  nowMs: number
}

export interface IssuedAccessToken {
  token: string
  expiresIn: number
}

/** The access token lifetime: the account's, narrowed by the client's when it sets a shorter one. */
export function accessTokenLifetime(settings: AccountSettings, client: RegisteredClient): number {
  return Math.min(settings.access_token_ttl, client.metadata.access_token_ttl ?? Number.POSITIVE_INFINITY)
}

/** An RFC 9068 JWT access token signed with the account's current key for its configured algorithm. */
export function issueAccessToken(input: AccessTokenInput): IssuedAccessToken {
  const signer = input.keys?.signer(input.settings.access_token_signing_alg, input.nowMs)
  if (!signer) throw new OAuthError('server_error', 'The account has no signing key')
  const iat = Math.floor(input.nowMs / 1000)
  const expiresIn = accessTokenLifetime(input.settings, input.client)
  const token = signJwt(signer, 'at+jwt', {
    iss: input.issuer,
    sub: input.subject,
    aud: input.audience,
    exp: iat + expiresIn,
    iat,
    // randomUUID draws from Node's entropy cache: 122 random bits without a syscall per token.
    jti: randomUUID(),
    client_id: input.client.id,
    scope: input.scope,
  })
  return { token, expiresIn }
}
