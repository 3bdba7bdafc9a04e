import type { Account } from '../accounts/accounts.js'
import { type AccessTokenVerifier, INACTIVE_REASONS } from '../access-tokens/access-token-verifier.js'
import { ProblemError } from '../http/problems.js'
import type { ClientKind } from '../storage/schema.js'
import type { ManagementScope } from './scopes.js'

/** What management auth needs to know of a client; the authorization area's client store provides it. */
export interface ManagementClient {
  kind: ClientKind
  credentialsVersion: number
  /** The scopes the client is allowed now. */
  scopes: readonly string[]
}

export interface ManagementPrincipal {
  clientId: string
  /** The token's scopes that its client is still allowed: a narrowed client's tokens narrow with it. */
  scopes: ReadonlySet<string>
  jti: string
}

/** RFC 6750 §2.1's b64token; the scheme name is case-insensitive (RFC 9110 §11.1). */
export const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i

/**
 * Authenticates calls to an account's management API with the account's own access tokens: active by the same
 * rules introspection applies (see AccessTokenVerifier), issued for the issuer itself (`aud`), to a management
 * client, and carrying the route's scope, which the client must still be allowed.
 */
export class ManagementAuth {
  constructor(private readonly verifier: AccessTokenVerifier<ManagementClient>) {}

  async authenticate(account: Account, issuer: string, authorization: string | undefined, required: ManagementScope): Promise<ManagementPrincipal> {
    const token = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1]
    if (token === undefined) {
      throw invalidToken(authorization === undefined ? 'An access token is required' : 'The Authorization header is not a Bearer token')
    }
    const verified = await this.verifier.verify(account.id, token, { issuer, audience: issuer })
    if (!verified.active) throw invalidToken(INACTIVE_REASONS[verified.reason])
    const { claims, client } = verified
    if (client.kind !== 'management') throw invalidToken('The access token was not issued to a management client')

    const scopes = new Set(claims.scope.split(' ').filter((scope) => client.scopes.includes(scope)))
    if (!scopes.has(required)) throw new ProblemError('insufficient_scope', `This operation requires the scope ${required}`)
    return { clientId: claims.client_id, scopes, jti: claims.jti }
  }
}

function invalidToken(detail: string): ProblemError {
  return new ProblemError('invalid_token', detail)
}
