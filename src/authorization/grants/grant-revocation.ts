import type { Kysely } from 'kysely'
import type { Outbox } from '../../platform/events/outbox.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { DB } from '../../platform/storage/schema.js'
import { type Tx, transaction } from '../../platform/storage/transaction.js'
import type { RefreshTokens } from './refresh-tokens.js'
import type { TokenRevocations } from '../revocation/revocation-store.js'

/** Why a grant was revoked, as its `oauth.grant.revoked` event says. */
export type GrantRevocationReason = 'refresh_token_reuse' | 'code_reuse' | 'refresh_token_revoked' | 'consent_revoked'

/**
 * Revokes a grant (one user's authorization of one client, an authorization flow once redeemed) and so everything it
 * issued: its refresh tokens can't be used, and its access tokens, which carry its id (`gid`), introspect inactive
 * and are refused by userinfo. Resource servers that verify the JWTs themselves learn of it only at expiry.
 */
export class GrantRevocation {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly refreshTokens: RefreshTokens,
    private readonly revocations: TokenRevocations,
    private readonly outbox: Outbox,
  ) {}

  /** RFC 7009: a client revokes a refresh token of its own, and so its grant; false when nothing changed. */
  async revokeRefreshToken(accountId: string, clientId: string, token: string, now: number): Promise<boolean> {
    const refresh = await this.refreshTokens.find(accountId, token)
    if (!refresh || refresh.clientId !== clientId) return false
    return transaction(this.db, (tx) => this.revoke(tx, accountId, refresh.grantId, 'refresh_token_revoked', now))
  }

  /**
   * False when the grant was revoked already (or does not exist): nothing changes and nothing is announced. The
   * revoked_at compare-and-set makes one incident one announcement, however many reuses and revocations race: only
   * the call whose statement revoked the grant records its events, a reuse's `oauth.refresh_token.reuse_detected`
   * among them.
   */
  async revoke(tx: Tx, accountId: string, grantId: string, reason: GrantRevocationReason, now: number): Promise<boolean> {
    const grant = await forAccount(tx.db, accountId)
      .updateTable('authorization_flows')
      .set({ revoked_at: now, updated_at: now })
      .where('id', '=', grantId)
      .where('revoked_at', 'is', null)
      .returning(['client_id', 'subject', 'expires_at'])
      .executeTakeFirst()
    if (!grant) return false
    await spendAll(tx.db, accountId, grantId, now)
    await this.revocations.recordGrantRevocation(tx, accountId, grantId, grant.expires_at, now)
    const about = { grant_id: grantId, client_id: grant.client_id, subject: grant.subject }
    if (reason === 'refresh_token_reuse') await this.outbox.record(tx, accountId, 'oauth.refresh_token.reuse_detected', about, now)
    await this.outbox.record(tx, accountId, 'oauth.grant.revoked', { ...about, reason }, now)
    return true
  }
}

/** Every refresh token of the grant is spent, and no retry can be answered with a successor. */
async function spendAll(db: Kysely<DB>, accountId: string, grantId: string, now: number): Promise<void> {
  await forAccount(db, accountId)
    .updateTable('refresh_tokens')
    .set((eb) => ({ spent_at: eb.fn.coalesce('spent_at', eb.val(now)), successor: null }))
    .where('grant_id', '=', grantId)
    .execute()
}
