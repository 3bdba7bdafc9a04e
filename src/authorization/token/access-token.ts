import { type JwtSigner, signJwt } from '../../platform/keys/material.js'
import { randomUUID } from 'node:crypto'
import type { AccountSettings } from '../../platform/settings/settings.js'
import type { RegisteredClient } from '../clients/client-store.js'
import type { ActorClaim } from '../../platform/access-tokens/access-token-verifier.js'

export interface AccessTokenInput {
  issuer: string
  subject: string
  client: RegisteredClient
  audience: string
  /** The granted scopes, space-separated as in the `scope` claim (RFC 9068 §2.2.3). */
  scope: string
  settings: AccountSettings
  signer: JwtSigner
  nowMs: number
  /** Set when the caller must know the token's id beforehand (to record it); otherwise a fresh one. */
  jti?: string
  /** A user's authorization (sign-in): its flow's id, and the claims the consent added. */
  grant?: { id: string; claims: Readonly<Record<string, unknown>> }
  /** A token exchange (RFC 8693): who acts (absent for impersonation), and the tokens it was exchanged from. */
  exchange?: { act: ActorClaim | undefined; sjti: readonly string[] }
  /** Epoch seconds the token must not outlive (an exchanged token's subject token's `exp`). */
  notAfter?: number
}

export interface IssuedAccessToken {
  token: string
  expiresIn: number
}

/** A lifetime of the account's, narrowed by the client's own when it sets a shorter one (never lengthened). */
export function narrowedLifetime(account: number, client: number | null): number {
  return client === null ? account : Math.min(account, client)
}

/** The access token lifetime: the account's, narrowed by the client's. */
export function accessTokenLifetime(settings: AccountSettings, client: RegisteredClient): number {
  return narrowedLifetime(settings.access_token_ttl, client.metadata.access_token_ttl)
}

/** An RFC 9068 JWT access token signed with the account's current key for its configured algorithm. */
export function issueAccessToken(input: AccessTokenInput): IssuedAccessToken {
  const iat = Math.floor(input.nowMs / 1000)
  const lifetime = accessTokenLifetime(input.settings, input.client)
  const expiresIn = input.notAfter === undefined ? lifetime : Math.min(lifetime, input.notAfter - iat)
  const claims = accessTokenClaimsJson({
      iss: input.issuer,
      sub: input.subject,
      aud: input.audience,
      exp: iat + expiresIn,
      iat,
    // randomUUID draws from Node's entropy cache: 122 random bits without a syscall per token.
    jti: input.jti ?? randomUUID(),
    client_id: input.client.id,
    scope: input.scope,
    cv: input.client.credentialsVersion,
  })
  const extra = input.grant || input.exchange ? extraClaims(input) : undefined
  const token = signJwt(input.signer, 'at+jwt', extra === undefined ? claims : `${claims.slice(0, -1)},${extra.slice(1)}`)
  return { token, expiresIn }
}

/**
 * The grant's id (`gid`) and the consent's own claims, which can't override Herald's (checked at consent); an
 * exchanged token's `act` and `sjti`. As a JSON object's text.
 */
function extraClaims({ grant, exchange }: AccessTokenInput): string {
  return JSON.stringify({
    ...grant?.claims,
    ...(grant && { gid: grant.id }),
    ...(exchange?.act && { act: exchange.act }),
    ...(exchange && exchange.sjti.length > 0 && { sjti: exchange.sjti }),
  })
}

/** RFC 9068 §2.2, and Herald's private `cv` (see AccessTokenVerifier). */
export interface AccessTokenClaims {
  iss: string
  sub: string
  aud: string
  exp: number
  iat: number
  jti: string
  client_id: string
  scope: string
  cv: number
}

/**
 * The claims as JSON text, exactly as JSON.stringify would write them (the tests compare the two). Written out by
 * hand because on Node 20, JSON.stringify of the claims object costs more than everything else in encoding a token
 * short of signing it; exp, iat and cv are integers, and a string is escaped only when it holds a character JSON
 * escapes.
 */
export function accessTokenClaimsJson(claims: AccessTokenClaims): string {
  return (
    `{"iss":${jsonString(claims.iss)},"sub":${jsonString(claims.sub)},"aud":${jsonString(claims.aud)},"exp":${claims.exp},"iat":${claims.iat},` +
    `"jti":${jsonString(claims.jti)},"client_id":${jsonString(claims.client_id)},"scope":${jsonString(claims.scope)},"cv":${claims.cv}}`
  )
}

/**
 * Anything but the characters JSON.stringify writes as they are: this finds '"', '\', control characters and
 * surrogates (paired ones need no escaping, but are left to JSON.stringify too).
 */
const MAY_NEED_ESCAPING = /[^\x20\x21\x23-\x5B\x5D-\uD7FF\uE000-\uFFFF]/

/** `value` as a JSON string, exactly as JSON.stringify writes it, without its cost when nothing needs escaping. */
export function jsonString(value: string): string {
  return MAY_NEED_ESCAPING.test(value) ? JSON.stringify(value) : `"${value}"`
}
