import { jwtVerify } from 'jose'
import type { AccessTokenVerifier, AccessTokenClaims } from '../../platform/access-tokens/access-token-verifier.js'
import { OAuthError } from '../../platform/http/oauth-errors.js'
import { verificationJwk } from '../../platform/keys/account-keys.js'
import { KeyReadFailure } from '../../platform/keys/key-material.js'
import type { KeyStore } from '../../platform/keys/key-store.js'
import type { RegisteredClient } from '../clients/client-store.js'
import { ACCESS_TOKEN_TYPE, type ExchangeSubject, ID_TOKEN_TYPE } from './delegation-policy.js'

/** Where and when an exchange is asked for, and by which client. */
export interface ExchangeContext {
  accountId: string
  issuer: string
  client: RegisteredClient
  nowMs: number
}

const NONE: readonly string[] = Object.freeze([])

/**
 * Reads the tokens of a token exchange (RFC 8693 §2.1). Every failure is `invalid_request`, as §2.2.2 requires for a
 * subject or actor token that is invalid or unacceptable, and says no more than that the token is not acceptable.
 */
export class ExchangeTokens {
  constructor(
    private readonly accessTokens: AccessTokenVerifier<RegisteredClient>,
    private readonly keys: KeyStore,
  ) {}

  /**
   * The subject: an access token of this account that is active by every rule introspection applies (whichever client
   * it was issued to), or an ID token this account issued to the requesting client, unexpired.
   */
  async subject(context: ExchangeContext, token: string, tokenType: string): Promise<ExchangeSubject> {
    if (tokenType === ACCESS_TOKEN_TYPE) return subjectOfAccessToken(await this.#activeAccessToken(context, token, 'subject_token'))
    if (tokenType === ID_TOKEN_TYPE) return this.#subjectOfIdToken(context, token)
    throw new OAuthError('invalid_request', `subject_token_type must be ${ACCESS_TOKEN_TYPE} or ${ID_TOKEN_TYPE}`)
  }

  /** The actor: the subject of an active access token issued to the requesting client itself. */
  async actor(context: ExchangeContext, token: string, tokenType: string | undefined): Promise<string> {
    if (tokenType !== ACCESS_TOKEN_TYPE) throw new OAuthError('invalid_request', `actor_token_type must be ${ACCESS_TOKEN_TYPE}`)
    const claims = await this.#activeAccessToken(context, token, 'actor_token')
    if (claims.client_id !== context.client.id) throw new OAuthError('invalid_request', 'The actor_token was issued to another client')
    return claims.sub
  }

  async #activeAccessToken({ accountId, issuer }: ExchangeContext, token: string, parameter: string): Promise<AccessTokenClaims> {
    const verified = await this.accessTokens.verify(accountId, token, { issuer })
    if (!verified.active) throw new OAuthError('invalid_request', `The ${parameter} is not an active access token of this account`)
    return verified.claims
  }

  async #subjectOfIdToken({ accountId, issuer, client, nowMs }: ExchangeContext, token: string): Promise<ExchangeSubject> {
    const keys = await this.keys.keysOf(accountId)
    try {
      const { payload } = await jwtVerify(token, verificationJwk(keys, nowMs), {
        issuer,
        audience: client.id,
        typ: 'JWT',
        algorithms: ['RS256', 'ES256'],
        currentDate: new Date(nowMs),
        requiredClaims: ['sub', 'exp'],
      })
      // An ID token has no `jti` to revoke and no grant: the new token lives by its lifetime alone.
      return { tokenType: ID_TOKEN_TYPE, subject: payload.sub!, exp: payload.exp!, scopes: undefined, jti: undefined, grantId: undefined, act: undefined, sjti: NONE, mayAct: payload.may_act }
    } catch (error) {
      if (error instanceof KeyReadFailure) throw error
      throw new OAuthError('invalid_request', 'The subject_token is not an unexpired ID token this account issued to the client')
    }
  }
}

function subjectOfAccessToken(claims: AccessTokenClaims): ExchangeSubject {
  return {
    tokenType: ACCESS_TOKEN_TYPE,
    subject: claims.sub,
    exp: claims.exp,
    scopes: claims.scope === '' ? NONE : claims.scope.split(' '),
    jti: claims.jti,
    grantId: claims.gid,
    act: claims.act,
    sjti: claims.sjti ?? NONE,
    mayAct: claims.may_act,
  }
}
