import { type Kysely, sql } from 'kysely'
import type { RevocationLookup } from '../../platform/access-tokens/access-token-verifier.js'
import { type Awaitable, andThen } from '../../platform/cache/awaitable.js'
import type { CacheInvalidation } from '../../platform/cache/invalidation.js'
import type { Clock } from '../../platform/clock.js'
import type { Outbox } from '../../platform/events/outbox.js'
import { Batcher, type ItemOutcome } from '../../platform/storage/batcher.js'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import type { DB } from '../../platform/storage/schema.js'
import { type Tx, transaction } from '../../platform/storage/transaction.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import { KnownRevocations, type KnownRevocationsOptions, type RevokedId } from './known-revocations.js'

interface TokenKey {
  account_id: string
  jti: string
}

/** Revocation lookups running at once, each for every question that arrived meanwhile. */
const LOOKUP_CONCURRENCY = 4
const LOOKUP_BATCH = 200

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

function grantRevocationKey(grantId: string): string {
  return `grant:${grantId}`
}

/**
 * The `token_revocations` table: one row per revoked access token, by `jti`, kept until the token would have
 * expired anyway. Management auth, introspection and token exchange ask it through AccessTokenVerifier; the
 * revocation endpoint and grant revocation write it; pruning deletes what has expired.
 *
 * Checks read the account's revocations from memory (KnownRevocations): a revocation counts at once in the process
 * that made it, at once through NOTIFY on PostgreSQL, and within the change log's read interval elsewhere (another
 * process on the same SQLite file), as a client's changed secret does. An account with more revocations than
 * memory keeps is asked the database, the questions of concurrent requests in one query.
 */
export class TokenRevocations implements RevocationLookup {
  readonly #known: KnownRevocations
  readonly #lookups: Batcher<TokenKey, boolean>

  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: SqlDialect,
    private readonly outbox: Outbox,
    private readonly invalidation: CacheInvalidation,
    clock: Clock,
    options: KnownRevocationsOptions,
  ) {
    this.#known = new KnownRevocations((accountId, now, limit) => this.#readAll(accountId, now, limit), invalidation, clock, options)
    this.#lookups = new Batcher((keys) => this.#lookUp(keys), { concurrency: LOOKUP_CONCURRENCY, maxBatch: LOOKUP_BATCH })
  }

  isRevoked(accountId: string, jti: string): Awaitable<boolean> {
    return andThen(this.#known.isRevoked(accountId, jti), (known) => known ?? this.#lookups.submit({ account_id: accountId, jti }))
  }

  /** Whether a grant was revoked: every token it issued is then refused (see GrantRevocation). */
  isGrantRevoked(accountId: string, grantId: string): Awaitable<boolean> {
    return this.isRevoked(accountId, grantRevocationKey(grantId))
  }

  /**
   * Records a grant's revocation where the token checks look, until `expiresAt`, when the last token it issued has
   * expired. Access token ids are UUIDs, so a grant's key can't name one.
   */
  async recordGrantRevocation(tx: Tx, accountId: string, grantId: string, expiresAt: number, now: number): Promise<void> {
    await forAccount(tx.db, accountId)
      .insertInto('token_revocations', { jti: grantRevocationKey(grantId), expires_at: expiresAt, revoked_at: now })
      .onConflict((conflict) => conflict.columns(['account_id', 'jti']).doNothing())
      .execute()
    await this.invalidation.record(tx, 'revocations', KnownRevocations.change(accountId, grantRevocationKey(grantId), expiresAt))
  }

  async #readAll(accountId: string, now: number, limit: number): Promise<RevokedId[]> {
    return forAccount(this.db, accountId).selectFrom('token_revocations').select(['jti', 'expires_at']).where('expires_at', '>', now).limit(limit).execute()
  }

  /** Cross-account: one statement answers a batch of several accounts' requests, each key with its account. */
  async #lookUp(keys: readonly TokenKey[]): Promise<Array<ItemOutcome<boolean>>> {
    const asked = this.dialect.jsonRows({ account_id: 'text', jti: 'text' }, keys)
    const { rows } = await sql<TokenKey>`
      select r.account_id, r.jti from token_revocations as r
      join ${asked} as k on k.account_id = r.account_id and k.jti = r.jti`.execute(this.db)
    const revoked = new Set(rows.map((row) => `${row.account_id}\n${row.jti}`))
    return keys.map((key) => ({ value: revoked.has(`${key.account_id}\n${key.jti}`) }))
  }

  /**
   * Records the revocation and its `oauth.token.revoked` event in one transaction. Revoking a revoked token
   * changes nothing and announces nothing, even when two requests race (`on conflict do nothing`).
   */
  async revoke(accountId: string, token: RevokedToken, now: number): Promise<boolean> {
    return transaction(this.db, async (tx) => {
      const result = await forAccount(tx.db, accountId)
        .insertInto('token_revocations', { jti: token.jti, expires_at: token.expiresAt, revoked_at: now })
        .onConflict((conflict) => conflict.columns(['account_id', 'jti']).doNothing())
        .executeTakeFirst()
      const inserted = (result.numInsertedOrUpdatedRows ?? 0n) > 0n
      if (inserted) {
        await this.invalidation.record(tx, 'revocations', KnownRevocations.change(accountId, token.jti, token.expiresAt))
        await this.outbox.record(tx, accountId, 'oauth.token.revoked', { jti: token.jti, client_id: token.clientId, expires_at: new Date(token.expiresAt).toISOString() }, now)
      }
      return inserted
    })
  }

  /**
   * Deletes at most `limit` records whose token expired before `before`, across every account: this is
   * housekeeping, not a tenant's query.
   */
  async pruneExpired(before: number, limit: number): Promise<number> {
    return this.dialect.deleteBatch(this.db, 'token_revocations', { condition: sql`expires_at <= ${before}`, orderBy: 'expires_at', limit })
  }
}
