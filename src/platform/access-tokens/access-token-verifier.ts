import { errors as joseErrors, jwtVerify, type JWTPayload } from 'jose'
import { LRUCache } from 'lru-cache'
import { sharedString } from '../cache/shared-values.js'
import { KeyReadFailure } from '../keys/key-material.js'
import type { Awaitable } from '../cache/awaitable.js'
import type { Clock } from '../clock.js'
import { sha256 } from '../crypto/random.js'
import { verificationJwk } from '../keys/account-keys.js'
import type { KeyStore } from '../keys/key-store.js'

/** The claims of a Herald access token (RFC 9068 §2.2), as the token endpoint issues them. */
export interface AccessTokenClaims {
  iss: string
  sub: string
  aud: string | string[]
  exp: number
  iat: number
  jti: string
  client_id: string
  scope: string
  /** The version of the client's credentials the token was issued under. */
  cv: number
  /** A user's token: the authorization (sign-in flow) it was issued under. */
  gid?: string
  /** An exchanged token (RFC 8693 §4.1): who acts for the subject. Absent when the client impersonates it. */
  act?: ActorClaim
  /** An exchanged token: the ids of the tokens it was exchanged from, the nearest first; revoking one revokes it. */
  sjti?: readonly string[]
  /** RFC 8693 §4.4: who may act for the subject, as a consent's claims gave it; read only by token exchange. */
  may_act?: unknown
}

/** RFC 8693 §4.1: the party acting for the subject and, nested, the one it acted for before (a delegation chain). */
export interface ActorClaim {
  sub: string
  /** The client that acts, when the actor named by `sub` is not that client itself. */
  client_id?: string
  act?: ActorClaim
}

/** Tokens exchanged from exchanged tokens nest at most this deep, which bounds their size (`act`, `sjti`). */
export const MAX_DELEGATION_DEPTH = 5

/** What verification needs to know of the client a token names. */
export interface TokenClient {
  /** Changes with every change of the client's credentials (a secret reset), and never repeats. */
  credentialsVersion: number
}

/** The clients of an account; the authorization area's client store provides it. */
export interface TokenClientLookup<C extends TokenClient> {
  find(accountId: string, clientId: string): Awaitable<C | undefined>
}

/** The revoked token ids of an account; the authorization area's revocation store provides it. */
export interface RevocationLookup {
  isRevoked(accountId: string, jti: string): Awaitable<boolean>
  /** Whether the grant (a user's authorization) a token was issued under was revoked. */
  isGrantRevoked(accountId: string, grantId: string): Awaitable<boolean>
}

/** Why a token is not active: one closed set, each with the description management auth shows. */
export const INACTIVE_REASONS = {
  malformed: 'The access token is malformed',
  invalid: 'The access token is invalid',
  foreign: 'The access token was not issued for this account',
  expired: 'The access token has expired',
  client_gone: 'The client this token was issued to no longer exists',
  credentials_changed: 'The client credentials changed after this token was issued',
  revoked: 'The access token has been revoked',
} as const satisfies Record<string, string>

export type InactiveReason = keyof typeof INACTIVE_REASONS

export type Verification<C> = { active: true; claims: AccessTokenClaims; client: C } | { active: false; reason: InactiveReason }

export interface VerifyOptions {
  /** The account's issuer; a token of another issuer is `foreign`. */
  issuer: string
  /** When given, the token's `aud` must contain it (management tokens are for the issuer itself). */
  audience?: string
}

/**
 * Decides whether an access token is active, for every consumer alike (management auth, introspection,
 * revocation): signed by one of the account's published keys, `typ` at+jwt, issued by the account's issuer,
 * unexpired on the injected clock, naming a client that still exists and whose credentials have not changed
 * since (the token's `cv` is still the client's credentials version), and not revoked. The cheap checks come
 * first, and only a token that passed everything else reaches the revocation lookup (from memory but for accounts
 * with very many revocations: see TokenRevocations).
 */
export class AccessTokenVerifier<C extends TokenClient> {
  /**
   * Tokens whose signature and fixed claims already checked out, by a digest of issuer, audience and token text.
   * A management client sends the same token for its whole lifetime, and verifying a signature costs more than
   * the rest of a request; what can change is re-checked on every use: expiry, and that the signing key is still
   * published (an emergency key revocation takes effect at once). Client and revocation checks always run.
   */
  readonly #verified: LRUCache<string, { claims: AccessTokenClaims; kid: string; alg: string }>

  constructor(
    private readonly keys: KeyStore,
    private readonly clients: TokenClientLookup<C>,
    private readonly revocations: RevocationLookup,
    private readonly clock: Clock,
    /** Verified tokens remembered at most (`HERALD_CACHE_SIZE`), the least recently used forgotten first. */
    maxVerified: number,
  ) {
    this.#verified = new LRUCache({ max: maxVerified })
  }

  async verify(accountId: string, token: string, options: VerifyOptions): Promise<Verification<C>> {
    const now = this.clock.now()
    const checked = await this.#verifyJwt(accountId, token, options, now)
    if (typeof checked === 'string') return inactive(checked)

    const client = await this.clients.find(accountId, checked.client_id)
    if (!client) return inactive('client_gone')
    // Compared by version rather than by iat, whose whole seconds let a token issued in the second of a reset (or
    // by an instance whose cache still held the old secret) survive it.
    // A version above the cached one comes from a change this process has yet to hear of: the token is newer still.
    if (checked.cv < client.credentialsVersion) return inactive('credentials_changed')
    // Asked together, so that a lookup that reads the database batches them into one statement. An exchanged token
    // dies with the tokens it was exchanged from (sjti), whether or not they had a grant.
    const lookups = [this.revocations.isRevoked(accountId, checked.jti)]
    if (checked.gid !== undefined) lookups.push(this.revocations.isGrantRevoked(accountId, checked.gid))
    for (const jti of checked.sjti ?? []) lookups.push(this.revocations.isRevoked(accountId, jti))
    if ((await Promise.all(lookups)).includes(true)) return inactive('revoked')
    return { active: true, claims: checked, client }
  }

  async #verifyJwt(accountId: string, token: string, { issuer, audience }: VerifyOptions, now: number): Promise<AccessTokenClaims | InactiveReason> {
    const keys = await this.keys.keysOf(accountId)
    // A digest, not the token text: ten thousand remembered tokens would otherwise hold ten megabytes of it.
    const cacheKey = sha256(`${issuer}\n${audience ?? ''}\n${token}`).toString('base64url')
    const known = this.#verified.get(cacheKey)
    if (known && keys?.verificationKey(known.kid, now)?.alg === known.alg) {
      // jose's rule, without clock tolerance: a token is expired once its exp second has begun.
      return Math.floor(now / 1000) >= known.claims.exp ? 'expired' : known.claims
    }
    this.#verified.delete(cacheKey)
    try {
      const { payload, protectedHeader } = await jwtVerify(
        token,
        verificationJwk(keys, now),
        {
          issuer,
          ...(audience !== undefined && { audience }),
          typ: 'at+jwt',
          algorithms: ['ES256', 'RS256'],
          currentDate: new Date(now),
          requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat', 'jti', 'client_id', 'cv'],
        },
      )
      const claims = asClaims(payload)
      if (!claims) return 'malformed'
      this.#verified.set(cacheKey, { claims, kid: protectedHeader.kid ?? '', alg: protectedHeader.alg })
      return claims
    } catch (error) {
      if (error instanceof KeyReadFailure) throw error
      if (error instanceof joseErrors.JWTExpired) return 'expired'
      if (error instanceof joseErrors.JWTClaimValidationFailed) {
        return (error.claim === 'iss' || error.claim === 'aud') && error.reason === 'check_failed' ? 'foreign' : 'malformed'
      }
      if (error instanceof joseErrors.JWTInvalid || error instanceof joseErrors.JWSInvalid) return 'malformed'
      return 'invalid'
    }
  }
}

function inactive(reason: InactiveReason): { active: false; reason: InactiveReason } {
  return { active: false, reason }
}

/** jose checked the registered claims' types; Herald's own claims are checked here. */
function asClaims(payload: JWTPayload): AccessTokenClaims | undefined {
  const { iss, sub, aud, exp, iat, jti } = payload
  const { client_id: clientId, scope = '', cv, gid, act, sjti, may_act: mayAct } = payload as Record<string, unknown>
  if (typeof iss !== 'string' || typeof sub !== 'string' || aud === undefined || typeof exp !== 'number' || typeof iat !== 'number') return undefined
  if (typeof jti !== 'string' || typeof clientId !== 'string' || typeof scope !== 'string' || typeof cv !== 'number') return undefined
  if (gid !== undefined && typeof gid !== 'string') return undefined
  const actor = act === undefined ? undefined : asActor(act, 1)
  if (actor === null || (sjti !== undefined && !isTokenIdList(sjti))) return undefined
  // The verified tokens kept are many and their issuers, clients and scopes few: those strings are kept once.
  return {
    iss: sharedString(iss),
    sub: sharedString(sub),
    aud: typeof aud === 'string' ? sharedString(aud) : aud,
    exp,
    iat,
    jti,
    client_id: sharedString(clientId),
    scope: sharedString(scope),
    cv,
    ...(gid !== undefined && { gid }),
    ...(actor !== undefined && { act: actor }),
    ...(sjti !== undefined && { sjti }),
    ...(mayAct !== undefined && { may_act: mayAct }),
  }
}

/** An `act` claim as Herald writes it, or null when it is anything else. */
function asActor(value: unknown, depth: number): ActorClaim | null {
  if (depth > MAX_DELEGATION_DEPTH || typeof value !== 'object' || value === null) return null
  const { sub, client_id: clientId, act } = value as { sub?: unknown; client_id?: unknown; act?: unknown }
  if (typeof sub !== 'string' || (clientId !== undefined && typeof clientId !== 'string')) return null
  const before = act === undefined ? undefined : asActor(act, depth + 1)
  if (before === null) return null
  return { sub, ...(clientId !== undefined && { client_id: clientId }), ...(before !== undefined && { act: before }) }
}

function isTokenIdList(value: unknown): value is string[] {
  return Array.isArray(value) && value.length <= MAX_DELEGATION_DEPTH && value.every((item) => typeof item === 'string')
}
