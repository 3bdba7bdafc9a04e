import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Clock } from '../../platform/clock.js'
import type { DB } from '../../platform/storage/schema.js'

/** Rows deleted per statement, so pruning never holds long locks or builds a huge transaction. */
export const PRUNE_BATCH_SIZE = 1000
/** Batches per pruning run: bounds one run's work; a backlog larger than this drains over the next runs. */
const PRUNE_MAX_BATCHES = 10
export const PRUNE_INTERVAL_MS = 60_000

/**
 * The `jti` values of accepted client assertions (RFC 7523 §3: "a JWT ... MAY be used only once"), kept until the
 * assertion could no longer be accepted anyway. Recording one is the only database write on the token endpoint's
 * authentication path; expired rows are pruned in bounded batches on a timer, never by a token request.
 */
export class AssertionReplay {
  #timer: NodeJS.Timeout | undefined
  #running: Promise<unknown> | undefined

  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
  ) {}

  /**
   * Records a first use and answers true; answers false when the jti was already used by this client and has not
   * expired. A row left over from an expired assertion is taken over, since that use could no longer be replayed.
   * One statement, so two concurrent uses of one jti can't both succeed: the primary key decides.
   */
  async firstUse(accountId: string, clientId: string, jti: string, expiresAt: number): Promise<boolean> {
    const now = this.clock.now()
    const result = await this.db
      .insertInto('client_assertion_jtis')
      .values({ account_id: accountId, client_id: clientId, jti, expires_at: expiresAt })
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

  /** Deletes expired rows, at most `PRUNE_BATCH_SIZE` per statement and `PRUNE_MAX_BATCHES` statements; returns how many. */
  async prune(): Promise<number> {
    const now = this.clock.now()
    let deleted = 0
    for (let batch = 0; batch < PRUNE_MAX_BATCHES; batch++) {
      // PostgreSQL has no DELETE … LIMIT: a keyset subquery bounds the batch on both dialects. The outer expiry
      // test is repeated so a row that a concurrent use took over (new expires_at) is re-checked and kept.
      const expired = this.db
        .selectFrom('client_assertion_jtis')
        .select(['account_id', 'client_id', 'jti'])
        .where('expires_at', '<=', now)
        .limit(PRUNE_BATCH_SIZE)
        .$asTuple('account_id', 'client_id', 'jti')
      const result = await this.db
        .deleteFrom('client_assertion_jtis')
        .where((eb) => eb(eb.refTuple('account_id', 'client_id', 'jti'), 'in', expired))
        .where('expires_at', '<=', now)
        .executeTakeFirst()
      const count = Number(result.numDeletedRows)
      deleted += count
      if (count < PRUNE_BATCH_SIZE) break
    }
    return deleted
  }

  /** Prunes every `intervalMs` until `stop`; the timer does not keep the process alive. */
  start(intervalMs: number = PRUNE_INTERVAL_MS): void {
    if (this.#timer) return
    this.#timer = setInterval(() => {
      if (this.#running) return
      this.#running = this.prune()
        .catch((error: unknown) => this.log.warn({ err: error }, 'pruning used client assertion ids failed'))
        .finally(() => (this.#running = undefined))
    }, intervalMs)
    this.#timer.unref()
  }

  /** Stops the timer and waits for a run in progress, so the pool can close under it safely. */
  async stop(): Promise<void> {
    clearInterval(this.#timer)
    this.#timer = undefined
    await this.#running
  }
}
