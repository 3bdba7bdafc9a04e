import type { Kysely } from 'kysely'
import { constantTimeEqual, sha256 } from '../../platform/crypto/random.js'
import { OAuthError } from '../../platform/http/oauth-errors.js'
import type { DB } from '../../platform/storage/schema.js'
import { transaction } from '../../platform/storage/transaction.js'
import { isUserGrant } from '../grants/grant.js'
import type { GrantRevocation } from '../grants/grant-revocation.js'
import type { RefreshTokens } from '../grants/refresh-tokens.js'
import { type FlowStore, isClosed } from '../sign-in/flow-store.js'
import type { GrantContext, TokenResponse } from './grants.js'
import { refreshLifetimes, refreshTokenAllowed } from './refresh-policy.js'
import { stillAllowed } from './scope-policy.js'
import type { UserTokens } from './user-tokens.js'

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/

const UNKNOWN_CODE = 'The code is unknown, expired, or was issued to another client'
const USED_CODE = 'The code was used already; the tokens issued with it are revoked'
const CLOSED_CODE = "The code was withdrawn: the user's session ended or the consent was revoked"

/**
 * RFC 6749 §4.1.3: redeems a code for the user's tokens. The code is single-use: a second redemption fails and
 * revokes the grant, and so every token the first one issued (RFC 6749 §4.1.2, RFC 9700 §4.5.3.1). The code belongs
 * to the client it was issued to, needs the authorization's redirect_uri and, when the request had a challenge, the
 * PKCE verifier (RFC 7636 §4.6); a verifier without a challenge is refused too (RFC 9700 §2.1.1, PKCE downgrade).
 */
export class AuthorizationCodeGrant {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly flows: FlowStore,
    private readonly userTokens: UserTokens,
    private readonly refreshTokens: RefreshTokens,
    private readonly grants: GrantRevocation,
  ) {}

  readonly issue = async (context: GrantContext): Promise<TokenResponse> => {
    const { account, client, body, nowMs, settings } = context
    if (typeof body.code !== 'string' || body.code === '') throw new OAuthError('invalid_request', 'code is required')
    const flow = await this.flows.byHandle(account.id, body.code)
    if (!flow || flow.clientId !== client.id) throw new OAuthError('invalid_grant', UNKNOWN_CODE)
    if (isClosed(flow)) throw new OAuthError('invalid_grant', CLOSED_CODE)
    if (flow.stage !== 'code' && flow.stage !== 'redeemed') throw new OAuthError('invalid_grant', UNKNOWN_CODE)
    if (flow.stage === 'redeemed') return this.#replayed(account.id, flow.id, nowMs)
    if (flow.expiresAt <= nowMs) throw new OAuthError('invalid_grant', 'The code has expired')
    if (body.redirect_uri !== flow.request.redirect_uri) throw new OAuthError('invalid_grant', 'redirect_uri is not the one the code was issued for')
    checkVerifier(flow.request.code_challenge, body.code_verifier)
    if (!isUserGrant(flow)) throw new OAuthError('invalid_grant', UNKNOWN_CODE)

    const scopes = stillAllowed(client, flow.consent.grant_scope)
    const refresh = refreshTokenAllowed(client, scopes) ? refreshLifetimes(settings, client, nowMs) : undefined
    const idSigner = await this.userTokens.idTokenSigner(context, scopes)
    const redeem = async (db: Kysely<DB>): Promise<TokenResponse> => {
      const refreshToken = refresh && (await this.refreshTokens.issue(db, account.id, { grantId: flow.id, clientId: client.id, scope: scopes, ...refresh }, nowMs))
      const issued = this.userTokens.issue(context, flow, scopes, { nonce: true, idSigner, ...(refreshToken && { refreshToken }) })
      // The grant now lives as long as the last token it may issue: userinfo reads the consent's claims from it, and
      // a replayed code or a refresh must still find it.
      const expiresAt = Math.max(issued.expiresAt, refresh ? refresh.absoluteExpiresAt + settings.access_token_ttl * 1000 : 0)
      const changes = { access_token_jti: issued.jti, access_token_expires_at: issued.expiresAt, expires_at: expiresAt }
      if (!(await this.flows.advance(db, flow, 'redeemed', changes, nowMs))) throw new MovedMeanwhile()
      return issued.response
    }
    // Spending the code is one statement; with a refresh token, the token and the spending commit together.
    const answer = refresh ? transaction(this.db, (tx) => redeem(tx.db)) : redeem(this.db)
    return answer.catch(async (error: unknown) => {
      if (error instanceof MovedMeanwhile) return this.#movedMeanwhile(account.id, flow.id, nowMs)
      throw error
    })
  }

  /**
   * The code left `code` between the read and the redemption: another request redeemed it (this one is the replay),
   * or the flow was closed (session ended, consent revoked, account disabled), which revokes nothing more.
   */
  async #movedMeanwhile(accountId: string, flowId: string, now: number): Promise<never> {
    const flow = await this.flows.byId(accountId, flowId)
    if (flow?.stage === 'redeemed') return this.#replayed(accountId, flowId, now)
    throw new OAuthError('invalid_grant', flow && isClosed(flow) ? CLOSED_CODE : UNKNOWN_CODE)
  }

  async #replayed(accountId: string, grantId: string, now: number): Promise<never> {
    await transaction(this.db, (tx) => this.grants.revoke(tx, accountId, grantId, 'code_reuse', now))
    throw new OAuthError('invalid_grant', USED_CODE)
  }
}

/** A redemption that lost the race for its code (its refresh token, if any, rolls back). */
class MovedMeanwhile extends Error {}

function checkVerifier(challenge: string | null, verifier: unknown): void {
  if (challenge === null) {
    if (verifier !== undefined) throw new OAuthError('invalid_grant', 'code_verifier was sent, but the authorization request had no code_challenge')
    return
  }
  if (typeof verifier !== 'string' || !CODE_VERIFIER.test(verifier)) throw new OAuthError('invalid_grant', 'code_verifier is missing or malformed')
  if (!constantTimeEqual(sha256(verifier).toString('base64url'), challenge)) throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge')
}
