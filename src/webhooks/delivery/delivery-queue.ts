import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Clock } from '../../platform/clock.js'
import type { Outbox } from '../../platform/events/outbox.js'
import type { SettingsStore } from '../../platform/settings/settings.js'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import type { DB } from '../../platform/storage/schema.js'
import { transaction } from '../../platform/storage/transaction.js'
import type { Endpoints } from '../endpoints/endpoints.js'
import { countAttempts } from '../endpoints/endpoint-stats.js'
import type { AttemptOutcome, ClaimedDelivery } from './attempt.js'
import { allocateClaim } from './claim-allocation.js'
import { type CompletionReport, DeliveryCompletions } from './completions.js'
import { EndpointHealth } from './endpoint-health.js'
import { claimable, notForClaims, notLeased, perEndpoint } from './leases.js'
import type { ClaimSql } from './sql/claim-sql.js'
import { claimSqlFor } from './sql/index.js'

export interface Claim {
  deliveries: ClaimedDelivery[]
  /** An endpoint had due deliveries its rate limit held back: look again when the next second starts. */
  rateLimited: boolean
  /**
   * Due deliveries may have been left for lack of room (an endpoint's in-flight cap, or `capacity`): claim again
   * as soon as attempts end. When false, the claim took everything that was due.
   */
  capped: boolean
}

/** Endpoints served per claim (see allocateClaim). */
const ENDPOINTS_PER_CLAIM = 200

/**
 * The deliveries table as a queue. A claim leases due deliveries in one short transaction: an endpoint gets at
 * most its in-flight cap minus what is already leased, and no more than its rate limit allows in the current
 * second. A lease sets `lease_expires_at` and changes no indexed column, so on PostgreSQL it writes no index
 * entry; a worker that dies leaves its deliveries due again when their leases end, and the next claim records
 * the lost attempt as `worker_lost`. Each claim also counts its deliveries per endpoint in `webhook_leases`,
 * which is how other processes learn an endpoint's deliveries in flight. Completions are written in batches and
 * fenced by the lease token, so a worker that lost its lease can't overwrite the new owner's result.
 *
 * Cross-account: a claim takes the due deliveries of every account (see docs/architecture/tenancy.md).
 */
export class DeliveryQueue {
  /** Names this process's leases, whose attempts in flight it counts itself (see claim). */
  readonly #holder = randomUUID()

  readonly #completions: DeliveryCompletions
  readonly #sql: ClaimSql

  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: SqlDialect,
    private readonly clock: Clock,
    settings: SettingsStore,
    endpoints: Endpoints,
    outbox: Outbox,
  ) {
    this.#sql = claimSqlFor(dialect)
    this.#completions = new DeliveryCompletions(db, dialect, clock, settings, new EndpointHealth(dialect, settings, endpoints), outbox)
  }

  /**
   * `inFlightHere` counts, per endpoint, this process's attempts still being sent. Other processes' are read from
   * their leases; this process's own are taken from the caller, who knows them to the attempt, so that the next
   * claim need not wait for finished attempts to be recorded.
   */
  async claim(capacity: number, leaseMs: number, inFlightHere: ReadonlyMap<string, number>): Promise<Claim> {
    return transaction(this.db, async (tx) => {
      await this.#sql.lockClaims(tx)
      const now = this.clock.now()
      const second = now - (now % 1000)
      const candidates = await tx.db
        .selectFrom('webhook_endpoints as e')
        .select(['e.id', 'e.max_in_flight', 'e.rate_limit', 'e.rate_window_start', 'e.rate_window_count'])
        .select((eb) =>
          eb
            .selectFrom('webhook_leases as l')
            .select((sum) => sum.fn.sum<number>('l.outstanding').as('n'))
            .whereRef('l.endpoint_id', '=', 'e.id')
            .where('l.holder', '<>', this.#holder)
            .where('l.expires_at', '>', now)
            .as('in_flight_elsewhere'),
        )
        .where('e.status', '=', 'active')
        // A disabled (suspended) account's deliveries wait until it is enabled again.
        .where((eb) => eb.exists(eb.selectFrom('accounts as a').select('a.id').whereRef('a.id', '=', 'e.account_id').where('a.status', '=', 'active')))
        // Asked endpoint by endpoint, in the queue index. Written as EXISTS, PostgreSQL may make it a join that reads
        // every due delivery instead, as it did with a backlog the statistics had not seen (441 ms for 410,000 due).
        .where((eb) => eb(eb.selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.endpoint_id', '=', 'e.id').where(claimable('d', now)).limit(1), 'is not', null))
        .execute()

      let { takes, rateLimited, capped } = allocateClaim(candidates, { capacity, second, inFlightHere, endpointsPerClaim: ENDPOINTS_PER_CLAIM, random: Math.random })
      // The endpoints whose rate windows this claim updates are locked before their deliveries, the order in which
      // disabling an endpoint takes them (the other way round, a claim and a disable deadlocked). One that another
      // transaction holds is left for the next claim, a second later.
      const limited = takes.filter(({ rate }) => rate !== null).map(({ endpointId }) => endpointId)
      if (limited.length > 0) {
        const locked = await this.#sql.lockRateWindows(tx, limited)
        if (locked.size < limited.length) rateLimited = true
        takes = takes.filter(({ endpointId, rate }) => rate === null || locked.has(endpointId))
      }
      if (takes.length === 0) return { deliveries: [], rateLimited, capped }

      // Each endpoint is asked again whether it is active, once per pick, by the statement that leases: it sees a
      // disable or a delete that committed after the look at the endpoints above. Disabling or deleting changes the
      // deliveries a batch at a time (StatusSweeps), so the ones beyond the first batch are still pending then.
      const picks = takes.map(({ endpointId, take }, index) =>
        tx.db
          .selectFrom(
            tx.db
              .selectFrom('webhook_deliveries')
              .select('id')
              .where('endpoint_id', '=', endpointId)
              .where(claimable('webhook_deliveries', now))
              .where((eb) => eb.exists(eb.selectFrom('webhook_endpoints as e').select('e.id').where('e.id', '=', endpointId).where('e.status', '=', 'active')))
              .orderBy('next_attempt_at')
              .limit(take)
              .as(`p${index}`),
          )
          .select('id'),
      )
      const picked = picks.slice(1).reduce((union, pick) => union.unionAll(pick), picks[0]!)
      const leaseToken = randomUUID()
      const rows = await this.#sql.lease(tx, { picked, now, leaseToken, leaseEnds: now + leaseMs, holder: this.#holder })
      if (rows.length === 0) return { deliveries: [], rateLimited, capped }

      // The lease statement counted each lost attempt on its delivery; here is its record.
      const lost = rows.filter((row) => row.lease_token !== null)
      if (lost.length > 0) {
        await tx.db
          .insertInto('webhook_attempts')
          .values(lost.map((row) => ({ delivery_id: row.id, number: row.attempt_count + 1, account_id: row.account_id, started_at: row.leased_at ?? now, duration_ms: null, response_status: null, error: 'worker_lost', response_excerpt: null, request_url: null, request_signature: null })))
          .onConflict((conflict) => conflict.doNothing())
          .execute()
        const counted = lost.map((row) => ({ deliveryId: row.id, accountId: row.account_id, endpointId: row.endpoint_id, startedAt: row.leased_at ?? now, responseStatus: null, durationMs: null }))
        await countAttempts(this.dialect, counted).execute(tx.db)
      }

      const claimedOf = perEndpoint(rows)
      // An endpoint that got all it asked for may have had more due.
      if (takes.some(({ endpointId, take }) => claimedOf.get(endpointId) === take)) capped = true
      for (const { endpointId, rate } of takes) {
        if (rate === null) continue
        const claimed = claimedOf.get(endpointId) ?? 0
        await tx.db.updateTable('webhook_endpoints').set({ rate_window_start: second, rate_window_count: rate.used + claimed }).where('id', '=', endpointId).execute()
      }

      const deliveries = rows.map(
        (row): ClaimedDelivery => ({
          id: row.id,
          accountId: row.account_id,
          endpointId: row.endpoint_id,
          eventId: row.event_id,
          eventType: row.event_type,
          eventData: row.data,
          eventCreatedAt: row.created_at,
          attemptNumber: row.attempt_count + (row.lease_token === null ? 1 : 2),
          leaseToken,
        }),
      )
      return { deliveries, rateLimited, capped }
    })
  }

  /** Records a batch of attempts' outcomes (see DeliveryCompletions); answers what they finished, failed and disabled. */
  complete(outcomes: readonly AttemptOutcome[]): Promise<CompletionReport> {
    return this.#completions.complete(outcomes)
  }

  /** When the earliest pending delivery is due (a leased one: when its lease ends), or null when none waits. */
  async nextDueAt(): Promise<number | null> {
    const now = this.clock.now()
    const row = await this.db
      .selectNoFrom((eb) => [
        eb
          .selectFrom('webhook_deliveries')
          .select((min) => min.fn.min('next_attempt_at').as('due'))
          .where('status', '=', 'pending')
          .where(notLeased('webhook_deliveries', now))
          .where(notForClaims('webhook_deliveries'))
          .as('waiting'),
        eb
          .selectFrom('webhook_leases')
          .select((min) => min.fn.min('expires_at').as('ends'))
          // A lease that has run out counts for nothing (its rows wait for the pruner): its end is no wake-up.
          .where('expires_at', '>', now)
          .as('leased'),
      ])
      .executeTakeFirstOrThrow()
    const times = [row.waiting, row.leased].filter((time) => time !== null).map(Number)
    return times.length > 0 ? Math.min(...times) : null
  }
}
