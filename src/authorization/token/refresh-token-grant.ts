import type { Kysely } from 'kysely'
import { randomToken } from '../../platform/crypto/random.js'
import { OAuthError } from '../../platform/http/oauth-errors.js'
import type { DB } from '../../platform/storage/schema.js'
import { transaction } from '../../platform/storage/transaction.js'
import { type UserGrant, isUserGrant } from '../grants/grant.js'
import type { GrantRevocation } from '../grants/grant-revocation.js'
import type { RefreshToken, RefreshTokens } from '../grants/refresh-tokens.js'
import type { RegisteredClient } from '../clients/client-store.js'
import type { GrantContext, TokenResponse } from './grants.js'
import { isValidScopeToken, stillAllowed } from './scope-policy.js'
import type { UserTokens } from './user-tokens.js'

const UNKNOWN = 'The refresh token is unknown, expired, revoked, or was issued to another client'

/**
 * RFC 6749 §6 with rotation (RFC 9700 §4.14.2): each refresh spends its token and answers a successor, whose
 * lifetime is the grant's, never extended. Presenting a spent token again revokes the whole grant and announces
 * `oauth.refresh_token.reuse_detected`, unless it comes within the account's reuse interval, when it is taken for a
 * retry and answered with the same successor. Scope can only narrow, and follows the client: a scope the client lost
 * is gone from the successor too. A revoked grant (or consent) refreshes nothing.
 */
export class RefreshTokenGrant {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly refreshTokens: RefreshTokens,
    private readonly userTokens: UserTokens,
    private readonly grants: GrantRevocation,
  ) {}

  readonly issue = async (context: GrantContext): Promise<TokenResponse> => {
    const { account, client, body, nowMs } = context
    if (typeof body.refresh_token !== 'string' || body.refresh_token === '') throw new OAuthError('invalid_request', 'refresh_token is required')
    const found = await this.refreshTokens.findWithGrant(account.id, body.refresh_token)
    if (!found || found.refresh.clientId !== client.id) throw new OAuthError('invalid_grant', UNKNOWN)
    const { refresh, grant } = found
    if (!isUserGrant(grant) || grant.revokedAt !== null) throw new OAuthError('invalid_grant', UNKNOWN)
    if (refresh.spentAt !== null) return this.#reused(context, refresh, grant)
    if (refresh.expiresAt <= nowMs) throw new OAuthError('invalid_grant', 'The refresh token has expired')
    const scopes = refreshedScopes(client, refresh.scope, body.scope)

    const keepSuccessor = context.settings.refresh_token_reuse_interval > 0
    const idSigner = await this.userTokens.idTokenSigner(context, scopes)
    const successor = randomToken()
    const issued = this.userTokens.issue(context, grant, scopes, { nonce: false, idSigner, refreshToken: successor })
    const successorGrant = { grantId: grant.id, clientId: client.id, scope: scopes, idleTtl: refresh.idleTtl, absoluteExpiresAt: refresh.absoluteExpiresAt }
    if (!(await this.refreshTokens.rotate(refresh, successorGrant, successor, keepSuccessor, nowMs))) {
      // Spent by a request running alongside this one (a client's retry, perhaps): judged as a reuse, by the row as
      // that request left it.
      const spent = await this.refreshTokens.find(account.id, body.refresh_token)
      return this.#reused(context, spent ?? refresh, grant)
    }
    return issued.response
  }

  async #reused(context: GrantContext, refresh: RefreshToken, grant: UserGrant): Promise<TokenResponse> {
    const { account, nowMs, settings } = context
    const retry = refresh.successor !== null && refresh.spentAt !== null && nowMs - refresh.spentAt <= settings.refresh_token_reuse_interval * 1000
    if (retry) {
      const scopes = refreshedScopes(context.client, refresh.scope, context.body.scope)
      const idSigner = await this.userTokens.idTokenSigner(context, scopes)
      return this.userTokens.issue(context, grant, scopes, { nonce: false, idSigner, refreshToken: refresh.successor! }).response
    }
    // Announces the reuse only if this request's revocation took effect (see GrantRevocation.revoke).
    await transaction(this.db, (tx) => this.grants.revoke(tx, account.id, grant.id, 'refresh_token_reuse', nowMs))
    throw new OAuthError('invalid_grant', 'The refresh token was used already; its grant is revoked')
  }
}

/**
 * The scopes a refresh issues: those of the token that the client may still request, narrowed to `requested`. A
 * client that lost `offline_access` refreshes nothing: it is what let the grant refresh (OpenID Connect Core §11).
 */
function refreshedScopes(client: RegisteredClient, granted: readonly string[], requested: unknown): string[] {
  if (granted.includes('offline_access') && !client.scopes.includes('offline_access')) {
    throw new OAuthError('invalid_grant', 'The client may no longer be granted offline_access')
  }
  return narrowed(stillAllowed(client, granted), requested)
}

/** RFC 6749 §6: the requested scope, which must be within what the token carries; none requested keeps it all. */
function narrowed(granted: readonly string[], requested: unknown): string[] {
  if (typeof requested !== 'string' || requested.trim() === '') return [...granted]
  const names = [...new Set(requested.split(' ').filter(Boolean))]
  const beyond = names.filter((name) => !isValidScopeToken(name) || !granted.includes(name))
  if (beyond.length > 0) throw new OAuthError('invalid_scope', `The refresh token was not granted, or its client may no longer request: ${beyond.join(' ')}`)
  return names
}
