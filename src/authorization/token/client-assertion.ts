import type { FastifyBaseLogger } from 'fastify'
import { type JWTPayload, type JWTVerifyGetKey, type JWTVerifyOptions, errors as joseErrors, jwtVerify } from 'jose'
import type { Clock } from '../../platform/clock.js'
import { OAuthError } from '../../platform/http/oauth-errors.js'
import { type ClientKeySets, KeySetUnavailableError } from '../clients/client-key-sets.js'
import type { RegisteredClient } from '../clients/client-store.js'
import type { AssertionReplay } from './assertion-replay.js'

/** RFC 7523 §2.2 */
export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'

/** Asymmetric algorithms only: no `none`, and no HS* (a shared secret would make `private_key_jwt` moot). */
export const ASSERTION_SIGNING_ALGS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const

/** The longest an assertion may be valid, from its `iat` or from now: it is meant for one request, right away. */
export const MAX_ASSERTION_LIFETIME_S = 300
/** Clock difference tolerated between the client and Herald, for `exp`, `nbf` and `iat`. */
export const ASSERTION_CLOCK_TOLERANCE_S = 30
const MAX_JTI_LENGTH = 256

export interface AssertionClaims {
  jti: string
  exp: number
  iat?: number
}

/**
 * Why the assertion's validity window is refused, or undefined. `jwtVerify` has already checked `exp` and `nbf`;
 * this caps how far ahead `exp` may be, so the replay table holds each `jti` for at most a few minutes.
 */
export function assertionLifetimeProblem(claims: AssertionClaims, nowS: number): string | undefined {
  if (claims.exp - nowS > MAX_ASSERTION_LIFETIME_S) {
    return `The client assertion must expire within ${MAX_ASSERTION_LIFETIME_S} seconds`
  }
  if (claims.iat === undefined) return undefined
  if (claims.iat > nowS + ASSERTION_CLOCK_TOLERANCE_S) return 'The client assertion was issued in the future'
  if (claims.exp - claims.iat > MAX_ASSERTION_LIFETIME_S) {
    return `The client assertion's lifetime (exp - iat) exceeds ${MAX_ASSERTION_LIFETIME_S} seconds`
  }
  return undefined
}

/**
 * `private_key_jwt` (RFC 7523 §2.2 and §3, OpenID Connect Core §9): the client proves itself with a JWT signed by
 * one of its registered keys, whose `iss` and `sub` are its client_id, whose `aud` is this authorization server,
 * and whose `jti` is used only once.
 */
export class ClientAssertions {
  constructor(
    private readonly keySets: ClientKeySets,
    private readonly replay: AssertionReplay,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Resolves when `assertion` authenticates `client` at `issuer`'s token endpoint; throws `invalid_client` otherwise. */
  async authenticate(client: RegisteredClient, assertion: string, issuer: string): Promise<void> {
    const nowMs = this.clock.now()
    const claims = await this.#verify(client, assertion, issuer, nowMs)
    const lifetimeProblem = assertionLifetimeProblem(claims, Math.floor(nowMs / 1000))
    if (lifetimeProblem) throw invalidClient(lifetimeProblem)
    // Kept until the assertion would be refused as expired anyway, tolerance included.
    const expiresAt = (claims.exp + ASSERTION_CLOCK_TOLERANCE_S) * 1000
    if (!(await this.replay.firstUse(client.accountId, client.id, claims.jti, expiresAt))) {
      throw invalidClient('The client assertion was already used')
    }
  }

  async #verify(client: RegisteredClient, assertion: string, issuer: string, nowMs: number): Promise<AssertionClaims> {
    const options: JWTVerifyOptions = {
      algorithms: [...ASSERTION_SIGNING_ALGS],
      issuer: client.id,
      subject: client.id,
      // The issuer identifies the authorization server; the token endpoint URL is what RFC 7523 §3 names.
      audience: [issuer, `${issuer}/oauth/tokens`],
      requiredClaims: ['exp', 'jti'],
      currentDate: new Date(nowMs),
      clockTolerance: ASSERTION_CLOCK_TOLERANCE_S,
    }
    let payload: JWTPayload
    try {
      payload = await verifyWithAnyKey(assertion, this.keySets.keysOf(client), options)
    } catch (error) {
      throw this.#refusal(error, client)
    }
    const { jti, exp, iat } = payload
    // The jti is stored (AssertionReplay), and PostgreSQL refuses a NUL that SQLite would store.
    if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH || jti.includes('\u0000')) {
      throw invalidClient(`The client assertion's jti must be a string of 1 to ${MAX_JTI_LENGTH} characters, without NUL`)
    }
    // jose has checked that exp (required) and iat (when present) are numbers.
    return { jti, exp: exp as number, ...(iat !== undefined && { iat }) }
  }

  /** The client learns what was wrong with its assertion; never anything about Herald's internals. */
  #refusal(error: unknown, client: RegisteredClient): OAuthError {
    if (error instanceof KeySetUnavailableError) return invalidClient(error.message)
    if (error instanceof joseErrors.JWTExpired) return invalidClient('The client assertion has expired')
    if (error instanceof joseErrors.JWTClaimValidationFailed) {
      if (error.reason === 'missing') return invalidClient(`The client assertion has no ${error.claim} claim`)
      if (error.claim === 'aud') return invalidClient("The client assertion's aud is not this authorization server or its token endpoint")
      if (error.claim === 'iss' || error.claim === 'sub') return invalidClient("The client assertion's iss and sub must both be the client_id")
      if (error.claim === 'nbf') return invalidClient('The client assertion is not valid yet')
      return invalidClient(`The client assertion's ${error.claim} claim is invalid`)
    }
    if (error instanceof joseErrors.JOSEAlgNotAllowed) {
      return invalidClient(`The client assertion must be signed with one of ${ASSERTION_SIGNING_ALGS.join(', ')}`)
    }
    if (error instanceof joseErrors.JOSEError) return invalidClient('The client assertion could not be verified')
    this.log.error({ err: error, accountId: client.accountId, clientId: client.id }, 'unexpected failure verifying a client assertion')
    return invalidClient('Client authentication failed')
  }
}

/**
 * `jwtVerify` with a key set that may hold several keys matching a JWT without a `kid`: jose then reports them
 * all, and each is tried in turn. A claim error after a good signature is final.
 */
async function verifyWithAnyKey(assertion: string, keys: JWTVerifyGetKey, options: JWTVerifyOptions): Promise<JWTPayload> {
  try {
    return (await jwtVerify(assertion, keys, options)).payload
  } catch (error) {
    if (!(error instanceof joseErrors.JWKSMultipleMatchingKeys)) throw error
    for await (const key of error) {
      try {
        return (await jwtVerify(assertion, key, options)).payload
      } catch (attempt) {
        if (!(attempt instanceof joseErrors.JWSSignatureVerificationFailed)) throw attempt
      }
    }
    throw new joseErrors.JWSSignatureVerificationFailed()
  }
}

function invalidClient(description: string): OAuthError {
  return new OAuthError('invalid_client', description)
}
