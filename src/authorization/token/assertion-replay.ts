import { type Kysely, sql } from 'kysely'
import type { Clock } from '../../platform/clock.js'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import type { DB } from '../../platform/storage/schema.js'
import { forAccount } from '../../platform/storage/account-queries.js'

/**
 * The `jti` values of accepted client assertions (RFC 7523 §3: "a JWT ... MAY be used only once"), kept until the
 * assertion could no longer be accepted anyway. Recording one is the only database write on the token endpoint's
 * authentication path; expired rows are pruned in bounded batches by a Pruner, never by a token request.
 */
export class AssertionReplay {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: SqlDialect,
    private readonly clock: Clock,
  ) {}

  /**
   * Records a first use and answers true; answers false when the jti was already used by this client and has not
   * expired. A row left over from an expired assertion is taken over, since that use could no longer be replayed.
   * One statement, so two concurrent uses of one jti can't both succeed: the primary key decides.
   */
  async firstUse(accountId: string, clientId: string, jti: string, expiresAt: number): Promise<boolean> {
    const now = this.clock.now()
    const result = await forAccount(this.db, accountId)
      .insertInto('client_assertion_jtis', { client_id: clientId, jti, expires_at: expiresAt })
      .onConflict((conflict) =>
        conflict
          .columns(['account_id', 'client_id', 'jti'])
          .doUpdateSet({ expires_at: (eb) => eb.ref('excluded.expires_at') })
          .where('client_assertion_jtis.expires_at', '<=', now),
      )
      .executeTakeFirst()
    // An insert, or the takeover of an expired row, counts one row; a live row left untouched counts none.
    return (result.numInsertedOrUpdatedRows ?? 0n) > 0n
  }

  /**
   * Deletes at most `limit` rows of assertions that have expired; answers how many went. A row that a new use took
   * over meanwhile (a later expiry) is kept. Cross-account: housekeeping, not a tenant's query.
   */
  async pruneExpired(limit: number): Promise<number> {
    return this.dialect.deleteBatch(this.db, 'client_assertion_jtis', { condition: sql`expires_at <= ${this.clock.now()}`, orderBy: 'expires_at', limit })
  }
}
