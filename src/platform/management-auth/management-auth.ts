import { errors as joseErrors, jwtVerify, type JWTPayload } from 'jose'
import type { Kysely } from 'kysely'
import type { Account } from '../accounts/accounts.js'
import type { Clock } from '../clock.js'
import { ProblemError } from '../http/problems.js'
import type { KeyStore } from '../keys/key-store.js'
import type { ClientKind, DB } from '../storage/schema.js'
import type { ManagementScope } from './scopes.js'

/** What management auth needs to know of a client; the authorization area's client store provides it. */
export interface ManagementClientLookup {
  find(accountId: string, clientId: string): Promise<{ kind: ClientKind; credentialsChangedAt: number } | undefined>
}

export interface ManagementPrincipal {
  clientId: string
  scopes: ReadonlySet<string>
  jti: string
}

interface AccessTokenClaims extends JWTPayload {
  client_id: string
  scope?: string
  jti: string
  iat: number
}

/** RFC 6750 §2.1's b64token; the scheme name is case-insensitive (RFC 9110 §11.1). */
const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i

/**
 * Authenticates calls to an account's management API with the account's own access tokens: signed by one of
 * its published keys, issued by its issuer for its issuer (`aud`), `typ` at+jwt, unexpired, from a management
 * client whose credentials have not changed since, not revoked, and carrying the route's scope.
 */
export class ManagementAuth {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly keys: KeyStore,
    private readonly clients: ManagementClientLookup,
    private readonly clock: Clock,
  ) {}

  async authenticate(account: Account, issuer: string, authorization: string | undefined, required: ManagementScope): Promise<ManagementPrincipal> {
    const token = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1]
    if (token === undefined) {
      throw invalidToken(authorization === undefined ? 'An access token is required' : 'The Authorization header is not a Bearer token')
    }
    const claims = await this.#verify(account.id, issuer, token)

    const client = await this.clients.find(account.id, claims.client_id)
    if (!client || client.kind !== 'management') throw invalidToken('The client this token was issued to no longer exists')
    // iat has one-second precision: a token is refused if it was issued in a whole second before the change.
    if (claims.iat < Math.floor(client.credentialsChangedAt / 1000)) {
      throw invalidToken('The client credentials changed after this token was issued')
    }
    const revoked = await this.db
      .selectFrom('token_revocations')
      .select('jti')
      .where('account_id', '=', account.id)
      .where('jti', '=', claims.jti)
      .executeTakeFirst()
    if (revoked) throw invalidToken('The access token has been revoked')

    const scopes = new Set((claims.scope ?? '').split(' ').filter(Boolean))
    if (!scopes.has(required)) throw new ProblemError('insufficient_scope', `This operation requires the scope ${required}`)
    return { clientId: claims.client_id, scopes, jti: claims.jti }
  }

  async #verify(accountId: string, issuer: string, token: string): Promise<AccessTokenClaims> {
    const now = this.clock.now()
    const keys = await this.keys.keysOf(accountId)
    try {
      const { payload } = await jwtVerify<AccessTokenClaims>(
        token,
        (header) => {
          const key = header.kid === undefined ? undefined : keys?.verificationKey(header.kid, now)
          if (!key || key.alg !== header.alg) throw new joseErrors.JWKSNoMatchingKey()
          return key.publicKey
        },
        {
          issuer,
          audience: issuer,
          typ: 'at+jwt',
          algorithms: ['ES256', 'RS256'],
          currentDate: new Date(now),
          requiredClaims: ['exp', 'iat', 'jti', 'client_id'],
        },
      )
      if (typeof payload.client_id !== 'string' || typeof payload.jti !== 'string') throw invalidToken('The access token is malformed')
      return payload
    } catch (error) {
      if (error instanceof ProblemError) throw error
      if (error instanceof joseErrors.JWTExpired) throw invalidToken('The access token has expired')
      if (error instanceof joseErrors.JWTClaimValidationFailed) throw invalidToken('The access token was not issued for this account')
      throw invalidToken('The access token is invalid')
    }
  }
}

function invalidToken(detail: string): ProblemError {
  return new ProblemError('invalid_token', detail)
}
