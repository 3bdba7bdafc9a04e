import type { Kysely } from 'kysely'
import type { RevocationLookup } from '../../platform/access-tokens/access-token-verifier.js'
import type { Outbox } from '../../platform/events/outbox.js'
import type { DB } from '../../platform/storage/schema.js'
import { transaction } from '../../platform/storage/transaction.js'

export interface RevokedToken {
  jti: string
  clientId: string
  /** The token's own expiry, epoch milliseconds: the record is useless after it. */
  expiresAt: number
}

/**
 * A record outlives its token by this margin, so a server whose clock lags the pruning one's still sees the
 * revocation for as long as it could still accept the token.
 */
export const PRUNE_GRACE_MS = 60_000

/**
 * The `token_revocations` table: one row per revoked access token, by `jti`, kept until the token would have
 * expired anyway. Management auth and introspection read it through AccessTokenVerifier; the revocation
 * endpoint writes it; pruning deletes what has expired.
 */
export class TokenRevocations implements RevocationLookup {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly outbox: Outbox,
  ) {}

  async isRevoked(accountId: string, jti: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('token_revocations')
      .select('jti')
      .where('account_id', '=', accountId)
      .where('jti', '=', jti)
      .executeTakeFirst()
    return row !== undefined
  }

  /**
   * Records the revocation and its `oauth.token.revoked` event in one transaction. Revoking a revoked token
   * changes nothing and announces nothing, even when two requests race (`on conflict do nothing`).
   */
  async revoke(accountId: string, token: RevokedToken, now: number): Promise<boolean> {
    return transaction(this.db, async (tx) => {
      const result = await tx.db
        .insertInto('token_revocations')
        .values({ account_id: accountId, jti: token.jti, expires_at: token.expiresAt, revoked_at: now })
        .onConflict((conflict) => conflict.columns(['account_id', 'jti']).doNothing())
        .executeTakeFirst()
      const inserted = (result.numInsertedOrUpdatedRows ?? 0n) > 0n
      if (inserted) {
        await this.outbox.record(tx, accountId, 'oauth.token.revoked', { jti: token.jti, client_id: token.clientId, expires_at: new Date(token.expiresAt).toISOString() }, now)
      }
      return inserted
    })
  }

  /**
   * Deletes at most `limit` records whose token expired before `before`, across every account: this is
   * housekeeping, not a tenant's query. PostgreSQL has no `DELETE … LIMIT`, so the batch is chosen by a key
   * subquery, which SQLite runs as well; the subquery walks the `expires_at` index.
   */
  async pruneExpired(before: number, limit: number): Promise<number> {
    const batch = this.db
      .selectFrom('token_revocations')
      .select(['account_id', 'jti'])
      .where('expires_at', '<=', before)
      .orderBy('expires_at')
      .limit(limit)
    const result = await this.db
      .deleteFrom('token_revocations')
      .where(({ eb, refTuple }) => eb(refTuple('account_id', 'jti'), 'in', batch.$asTuple('account_id', 'jti')))
      .executeTakeFirst()
    return Number(result.numDeletedRows)
  }
}
