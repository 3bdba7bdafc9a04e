import { randomUUID } from 'node:crypto'
import { OAuthError } from '../../platform/http/oauth-errors.js'
import type { KeyStore } from '../../platform/keys/key-store.js'
import type { JwtSigner } from '../../platform/keys/material.js'
import type { UserGrant } from '../grants/grant.js'
import { claimsForScopes } from '../grants/scope-claims.js'
import { issueAccessToken } from './access-token.js'
import { accessTokenAudience } from './audience-policy.js'
import type { GrantContext, TokenResponse } from './grants.js'
import { issueIdToken } from './id-token.js'

export interface IssuedUserTokens {
  response: TokenResponse
  /** The access token's id and expiry, epoch ms. */
  jti: string
  expiresAt: number
}

/**
 * The tokens of a user's grant, for the code and refresh grants alike: an access token carrying the grant's id
 * (`gid`) and the consent's access token claims, and with `openid` an ID token signed with the client's algorithm.
 * Each carries the consent's claims for the scopes it is issued with, not the consent's whole grant (claimsForScopes).
 * A refresh answers a new ID token without `nonce` (OpenID Connect Core §12.2).
 */
export class UserTokens {
  constructor(private readonly keys: KeyStore) {}

  /**
   * The key the client's ID tokens are signed with, if `scopes` call for one. Asked for before a grant's transaction
   * starts, so that a cold cache's read never waits for the connection the transaction holds (SQLite has one).
   */
  async idTokenSigner(context: GrantContext, scopes: readonly string[]): Promise<JwtSigner | undefined> {
    if (!scopes.includes('openid')) return undefined
    const signer = await (await this.keys.keysOf(context.account.id))?.signer(context.client.metadata.id_token_signed_response_alg, context.nowMs)
    if (!signer) throw new OAuthError('server_error', 'The account has no key for the ID token algorithm')
    return signer
  }

  issue(context: GrantContext, grant: UserGrant, scopes: readonly string[], options: { nonce: boolean; idSigner: JwtSigner | undefined; refreshToken?: string }): IssuedUserTokens {
    const { client, issuer, settings, nowMs } = context
    const scope = scopes.join(' ')
    const audience = accessTokenAudience({ client, settings, issuer, scopes, resources: grant.consent.grant_audience.slice(0, 1) })
    const jti = randomUUID()
    const { token, expiresIn } = issueAccessToken({
      issuer,
      subject: grant.subject,
      client,
      audience,
      scope,
      settings,
      signer: context.signer,
      nowMs,
      jti,
      grant: { id: grant.id, claims: claimsForScopes(grant.consent.session.access_token, scopes) },
    })
    const response: TokenResponse = { access_token: token, token_type: 'Bearer', expires_in: expiresIn, scope }
    if (options.refreshToken !== undefined) response.refresh_token = options.refreshToken
    const signer = options.idSigner
    if (signer) {
      response.id_token = issueIdToken({
        issuer,
        client,
        subject: grant.subject,
        authTime: grant.login.auth_time,
        acr: grant.login.acr,
        amr: grant.login.amr,
        sessionId: grant.sessionId,
        nonce: options.nonce ? grant.request.nonce : null,
        accessToken: token,
        claims: claimsForScopes(grant.consent.session.id_token, scopes),
        settings,
        signer,
        nowMs,
      })
    }
    return { response, jti, expiresAt: nowMs + expiresIn * 1000 }
  }
}
