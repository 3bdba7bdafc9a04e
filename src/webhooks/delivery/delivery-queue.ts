import { randomUUID } from 'node:crypto'
import { type Expression, type ExpressionBuilder, type Kysely, type RawBuilder, type SelectQueryBuilder, sql } from 'kysely'
import type { Clock } from '../../platform/clock.js'
import type { Outbox } from '../../platform/events/outbox.js'
import type { SettingsStore } from '../../platform/settings/settings.js'
import type { DialectFeatures } from '../../platform/storage/database.js'
import type { DB, DeliveryStatus, EndpointStatus, WebhookDeliveriesTable } from '../../platform/storage/schema.js'
import { jsonRows } from '../../platform/storage/json-rows.js'
import { type Tx, transaction } from '../../platform/storage/transaction.js'
import type { Endpoints } from '../endpoints/endpoints.js'
import { isOperationalType } from '../events/event-types.js'
import { cancellation, HOLDING } from './deliveries.js'
import { claimable, countsPerLease, notForClaims, notLeased, perEndpoint, releaseLeases } from './leases.js'
import { nextAttemptAt } from './retry-schedule.js'

/** A delivery a worker holds under a lease, with what it needs to send it. */
export interface ClaimedDelivery {
  id: string
  accountId: string
  endpointId: string
  eventId: string
  eventType: string
  /** The event's `data` exactly as stored: JSON text, put into the body without parsing. */
  eventData: string
  eventCreatedAt: number
  /** 1 for the first attempt. */
  attemptNumber: number
  leaseToken: string
}

/** What one attempt found: a response status, or the class of network error that prevented one. */
export interface AttemptOutcome {
  delivery: ClaimedDelivery
  startedAt: number
  durationMs: number | null
  responseStatus: number | null
  error: string | null
  responseExcerpt: string | null
  retryAfterSeconds: number | null
}

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

/** Serialises claims across processes on PostgreSQL, so per-endpoint caps count every process's leases. */
const CLAIM_LOCK = 0x48_45_52_44
/** Endpoints served per claim; the order is shuffled each time so none waits behind the others for long. */
const ENDPOINTS_PER_CLAIM = 200

export function isSuccess(status: number | null): boolean {
  return status !== null && status >= 200 && status < 300
}

/**
 * The deliveries table as a queue. A claim leases due deliveries in one short transaction: an endpoint gets at
 * most its in-flight cap minus what is already leased, and no more than its rate limit allows in the current
 * second. A lease sets `lease_expires_at` and changes no indexed column, so on PostgreSQL it writes no index
 * entry; a worker that dies leaves its deliveries due again when their leases end, and the next claim records
 * the lost attempt as `worker_lost`. Each claim also counts its deliveries per endpoint in `webhook_leases`,
 * which is how other processes learn an endpoint's deliveries in flight. Completions are written in batches and
 * fenced by the lease token, so a worker that lost its lease can't overwrite the new owner's result.
 */
export class DeliveryQueue {
  /** Names this process's leases, whose attempts in flight it counts itself (see claim). */
  readonly #holder = randomUUID()

  constructor(
    private readonly db: Kysely<DB>,
    private readonly features: DialectFeatures,
    private readonly clock: Clock,
    private readonly settings: SettingsStore,
    private readonly endpoints: Endpoints,
    private readonly outbox: Outbox,
  ) {}

  /**
   * `inFlightHere` counts, per endpoint, this process's attempts still being sent. Other processes' are read from
   * their leases; this process's own are taken from the caller, who knows them to the attempt, so that the next
   * claim need not wait for finished attempts to be recorded.
   */
  async claim(capacity: number, leaseMs: number, inFlightHere: ReadonlyMap<string, number>): Promise<Claim> {
    return transaction(this.db, async (tx) => {
      if (this.features.rowLocks) await sql`select pg_advisory_xact_lock(${CLAIM_LOCK})`.execute(tx.db)
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

      let remaining = capacity
      let rateLimited = false
      let capped = candidates.length > ENDPOINTS_PER_CLAIM
      let takes: Array<{ endpointId: string; take: number; rate: { used: number } | null }> = []
      for (const endpoint of shuffle(candidates).slice(0, ENDPOINTS_PER_CLAIM)) {
        if (remaining === 0) {
          capped = true
          break
        }
        let allowance = endpoint.max_in_flight - Number(endpoint.in_flight_elsewhere ?? 0) - (inFlightHere.get(endpoint.id) ?? 0)
        if (allowance <= 0) capped = true
        let rate: { used: number } | null = null
        if (endpoint.rate_limit !== null) {
          const used = endpoint.rate_window_start === second ? endpoint.rate_window_count : 0
          if (used + allowance > endpoint.rate_limit) rateLimited = true
          allowance = Math.min(allowance, endpoint.rate_limit - used)
          rate = { used }
        }
        const take = Math.min(allowance, remaining)
        if (take <= 0) continue
        takes.push({ endpointId: endpoint.id, take, rate })
        remaining -= take
      }
      // The endpoints whose rate windows this claim updates are locked before their deliveries, the order in which
      // disabling an endpoint takes them (the other way round, a claim and a disable deadlocked). One that another
      // transaction holds is left for the next claim, a second later: a claim never waits for an endpoint's row,
      // which a completion or a re-queue may hold while waiting for rows of its own.
      const limited = takes.filter(({ rate }) => rate !== null).map(({ endpointId }) => endpointId)
      if (limited.length > 0 && this.features.rowLocks) {
        const locked = new Set((await tx.db.selectFrom('webhook_endpoints').select('id').where('id', 'in', limited).forNoKeyUpdate().skipLocked().execute()).map((row) => row.id))
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
      const rows = await this.#lease(tx, picked, now, leaseToken, now + leaseMs)
      if (rows.length === 0) return { deliveries: [], rateLimited, capped }

      // The lease statement counted each lost attempt on its delivery; here is its record.
      const lost = rows.filter((row) => row.lease_token !== null)
      if (lost.length > 0) {
        await tx.db
          .insertInto('webhook_attempts')
          .values(lost.map((row) => ({ delivery_id: row.id, number: row.attempt_count + 1, account_id: row.account_id, started_at: row.leased_at ?? now, duration_ms: null, response_status: null, error: 'worker_lost', response_excerpt: null })))
          .onConflict((conflict) => conflict.doNothing())
          .execute()
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

  /**
   * Leases the picked deliveries that are still claimable and records the lease's count per endpoint; answers each
   * delivery as it was before (a previous lease means a lost attempt), with its event's payload, which the attempt
   * needs. On PostgreSQL this is one statement: the rows are locked (SKIP LOCKED leaves a row another transaction
   * is changing to a later claim), leased, counted, and read back.
   */
  async #lease(tx: Tx, picked: SelectQueryBuilder<DB, never, { id: string }>, now: number, leaseToken: string, leaseEnds: number) {
    // A lease that ran out: the worker holding it is gone, and whether its attempt reached the receiver is unknown.
    // It counts as an attempt, which started when that lease was taken, and the delivery is tried again at once.
    // SET reads the row as it was, so `leased_at` on the right is the lost lease's. No indexed column changes.
    const lease = (eb: ExpressionBuilder<DB, 'webhook_deliveries'>) => {
      // `column` becomes `value` where the row's lease was lost, and stays as it is elsewhere.
      const ifLost = <C extends 'attempt_count' | 'last_attempt_at' | 'last_error' | 'last_response_status'>(column: C, value: Expression<WebhookDeliveriesTable[C]>) =>
        eb.case().when('lease_token', 'is not', null).then(value).else(eb.ref(column)).end()
      return {
        lease_token: leaseToken,
        leased_at: now,
        lease_expires_at: leaseEnds,
        attempt_count: ifLost('attempt_count', eb('attempt_count', '+', 1)),
        last_attempt_at: ifLost('last_attempt_at', eb.ref('leased_at')),
        last_error: ifLost('last_error', sql.lit('worker_lost')),
        last_response_status: ifLost('last_response_status', sql.lit(null)),
      }
    }
    const columns = ['d.id', 'd.account_id', 'd.endpoint_id', 'd.event_id', 'd.event_type', 'd.attempt_count', 'd.lease_token', 'd.leased_at', 'e.data', 'e.created_at'] as const
    const leaseRow = { lease_token: leaseToken, holder: this.#holder, expires_at: leaseEnds }
    if (this.features.rowLocks && this.features.writableCtes) {
      // Each picked delivery is locked on its own, found by its id alone, in a lateral subquery; the statement
      // leases exactly the rows it answers. Claimability is asked again of the version the lock found: a
      // transaction may have committed a change since `picked` was read (a late completion of a lapsed lease, an
      // endpoint's deletion), and without the check a finished delivery would be leased again. One id at a time,
      // only the primary key is worth using, whatever the statistics, so the check stays outside the subquery
      // (its LIMIT keeps PostgreSQL from pushing the check in): inside, `status = 'pending'` let the planner look
      // each id up in the partial queue or due index instead, reading every queued delivery's entry, whenever
      // the statistics counted few pending rows, as they do of a table that keeps a long history of finished
      // ones. As one scan of all the picked ids, the planner ANDed them with the due index, and as a semi-join it
      // read the whole table.
      const claimed = tx.db
        .selectFrom(picked.as('p'))
        .crossJoinLateral((eb) => eb.selectFrom('webhook_deliveries as d').selectAll('d').whereRef('d.id', '=', 'p.id').limit(1).forUpdate().skipLocked().as('d'))
        .innerJoin('events as e', 'e.id', 'd.event_id')
        .where(claimable('d', now))
        .select(columns)
      return tx.db
        .with('claimed', () => claimed)
        .with('leased', (db) => db.updateTable('webhook_deliveries').set(lease).where('id', 'in', (eb) => eb.selectFrom('claimed').select('claimed.id')))
        .with('counted', (db) =>
          db
            .insertInto('webhook_leases')
            .columns(['lease_token', 'endpoint_id', 'holder', 'outstanding', 'expires_at'])
            .expression((eb) =>
              eb
                .selectFrom('claimed')
                .select((count) => [
                  sql<string>`cast(${leaseRow.lease_token} as text)`.as('lease_token'),
                  'claimed.endpoint_id',
                  sql<string>`cast(${leaseRow.holder} as text)`.as('holder'),
                  count.fn.countAll<number>().as('outstanding'),
                  sql<number>`cast(${leaseRow.expires_at} as bigint)`.as('expires_at'),
                ])
                .groupBy('claimed.endpoint_id'),
            ),
        )
        .selectFrom('claimed')
        .selectAll()
        .execute()
    }
    // SQLite: one process with one connection, whose transactions run one at a time: nothing changes in between, and
    // the picked deliveries are still claimable. Found by id alone, they are read through the primary key (asked again
    // whether they are claimable, they were looked up in the due index when the statistics counted few pending rows).
    const rows = await tx.db.selectFrom('webhook_deliveries as d').innerJoin('events as e', 'e.id', 'd.event_id').select(columns).where('d.id', 'in', picked).execute()
    if (rows.length === 0) return rows
    const leased = jsonRows(this.features, { id: 'text' }, rows.map((row) => ({ id: row.id })))
    await tx.db
      .updateTable('webhook_deliveries')
      .set(lease)
      .where('id', 'in', (eb) => eb.selectFrom(leased.as('l')).select(sql.ref<string>('l.id').as('id')))
      .execute()
    await tx.db
      .insertInto('webhook_leases')
      .values([...perEndpoint(rows)].map(([endpointId, count]) => ({ ...leaseRow, endpoint_id: endpointId, outstanding: count })))
      .execute()
    return rows
  }

  /**
   * Records a batch of attempts and moves each delivery on: `succeeded`, `pending` for its next retry, `held`
   * when its endpoint is disabled (`cancelled` when it is gone), or `failed` when the schedule is exhausted.
   * Outcomes whose lease was lost are discarded. Answers the deliveries that reached a final status in this batch.
   */
  async complete(outcomes: readonly AttemptOutcome[]): Promise<Array<{ status: DeliveryStatus }>> {
    if (outcomes.length === 0) return []
    const now = this.clock.now()
    const plans = await Promise.all(outcomes.map((outcome) => this.#plan(outcome, now)))
    if (this.features.writableCtes && plans.every((plan) => plan.status === 'succeeded')) return this.#completeSuccesses(plans, now)
    return transaction(this.db, async (tx) => {
      const kept = new Set(await this.#apply(tx, plans))
      for (const statement of releaseLeases(this.#leaseCounts(plans), now)) await statement.execute(tx.db)
      const applied = plans.filter((plan) => kept.has(plan.outcome.delivery.id))
      if (applied.length === 0) return []
      await this.#holdOrCancelRetries(tx, applied, await this.#lockEndpoints(tx, applied), now)
      await this.#attemptsInsert(applied.map((plan) => plan.outcome)).execute(tx.db)
      await this.#trackEndpointHealth(tx, applied, now)
      const failures = applied.filter((plan) => plan.status === 'failed' && !isOperationalType(plan.outcome.delivery.eventType))
      await this.outbox.recordAll(
        tx,
        failures.map(({ outcome: { delivery, responseStatus, error } }) => ({
          accountId: delivery.accountId,
          type: 'webhook.delivery.failed',
          data: {
            delivery_id: delivery.id,
            event_id: delivery.eventId,
            event_type: delivery.eventType,
            endpoint_id: delivery.endpointId,
            attempt_count: delivery.attemptNumber,
            last_response_status: responseStatus,
            last_error: error,
          },
        })),
        now,
      )
      return applied.filter((plan) => plan.finishedAt !== null).map((plan) => ({ status: plan.status }))
    })
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
          .as('leased'),
      ])
      .executeTakeFirstOrThrow()
    const times = [row.waiting, row.leased].filter((time) => time !== null).map(Number)
    return times.length > 0 ? Math.min(...times) : null
  }

  async #plan(outcome: AttemptOutcome, now: number): Promise<CompletionPlan> {
    const { delivery } = outcome
    if (isSuccess(outcome.responseStatus)) return { outcome, status: 'succeeded', nextAttemptAt: null, finishedAt: now }
    const settings = await this.settings.get(delivery.accountId)
    const next = settings ? nextAttemptAt(settings.webhook_retry_schedule, delivery.attemptNumber, now, outcome.retryAfterSeconds) : null
    if (next === null) return { outcome, status: 'failed', nextAttemptAt: null, finishedAt: now }
    // Held or cancelled instead if its endpoint is disabled or gone (see #holdOrCancelRetries).
    return { outcome, status: 'pending', nextAttemptAt: next, finishedAt: null }
  }

  /**
   * Locks the endpoints of `plans` (on PostgreSQL), in one statement and in the order of their ids, as every
   * transaction that locks several endpoints does, so that two never wait for each other; answers their statuses.
   * The deliveries come first, the order in which deleting an endpoint takes them. The lock (FOR NO KEY UPDATE) is the
   * one that ending or starting a run of failures needs next, and it makes enabling or disabling one of them wait.
   */
  async #lockEndpoints(tx: Tx, plans: readonly CompletionPlan[]): Promise<Map<string, EndpointStatus>> {
    let endpoints = tx.db.selectFrom('webhook_endpoints').select(['id', 'status']).where('id', 'in', [...new Set(plans.map((plan) => plan.outcome.delivery.endpointId))]).orderBy('id')
    if (this.features.rowLocks) endpoints = endpoints.forNoKeyUpdate()
    return new Map((await endpoints.execute()).map((row) => [row.id, row.status]))
  }

  /**
   * Deliveries that are to be tried again wait as `held` if their endpoint is disabled, as read under the lock of
   * #lockEndpoints once the deliveries are written: an enable or disable then waits for this transaction and
   * releases or holds these deliveries with the rest, and one that committed first is what the read finds. (A
   * cached status could be moments behind another process's change, and a delivery held after its endpoint's
   * release would wait for good.) Those whose endpoint is gone are cancelled: leased by a claim that read the
   * endpoint just before it was deleted, after the delete had cancelled what was in flight, they may lie behind
   * the delete's sweep, which would never see them again.
   */
  async #holdOrCancelRetries(tx: Tx, plans: CompletionPlan[], endpoints: ReadonlyMap<string, EndpointStatus>, now: number): Promise<void> {
    const retried = plans.filter((plan) => plan.status === 'pending')
    const held = retried.filter((plan) => endpoints.get(plan.outcome.delivery.endpointId) === 'disabled')
    const cancelled = retried.filter((plan) => !endpoints.has(plan.outcome.delivery.endpointId))
    if (held.length > 0) await tx.db.updateTable('webhook_deliveries').set(HOLDING).where('id', 'in', held.map((plan) => plan.outcome.delivery.id)).execute()
    if (cancelled.length > 0) await tx.db.updateTable('webhook_deliveries').set(cancellation(now)).where('id', 'in', cancelled.map((plan) => plan.outcome.delivery.id)).execute()
    for (const plan of held) {
      plan.status = 'held'
      plan.nextAttemptAt = null
    }
    for (const plan of cancelled) {
      plan.status = 'cancelled'
      plan.nextAttemptAt = null
      plan.finishedAt = now
    }
  }

  /** One fenced UPDATE for the whole batch; answers the ids whose lease still held. */
  async #apply(tx: Tx, plans: readonly CompletionPlan[]): Promise<string[]> {
    const { rows } = await this.#applyQuery(plans).execute(tx.db)
    return rows.map((row) => row.id)
  }

  /**
   * The deliveries of `plans` per lease and endpoint, to release (see releaseLeases). Every plan counts, applied
   * or not: one that was not had lost its lease (it ran out, or the endpoint was deleted while the attempt was in
   * flight), and such a lease's count no longer matters.
   */
  #leaseCounts(plans: readonly CompletionPlan[]): RawBuilder<unknown> {
    return countsPerLease(this.features, plans.map(({ outcome }) => outcome.delivery))
  }

  #applyQuery(plans: readonly CompletionPlan[]): RawBuilder<{ id: string; endpoint_id: string }> {
    const outcomes = jsonRows(
      this.features,
      { id: 'text', lease_token: 'text', status: 'text', attempt_count: 'integer', next_attempt_at: 'bigint', last_attempt_at: 'bigint', last_response_status: 'integer', last_error: 'text', finished_at: 'bigint' },
      plans.map(({ outcome, status, nextAttemptAt: next, finishedAt }) => ({
        id: outcome.delivery.id,
        lease_token: outcome.delivery.leaseToken,
        status,
        attempt_count: outcome.delivery.attemptNumber,
        next_attempt_at: next,
        last_attempt_at: outcome.startedAt,
        last_response_status: outcome.responseStatus,
        last_error: outcome.error,
        finished_at: finishedAt,
      })),
    )
    return sql`
      update webhook_deliveries set
        status = v.status, attempt_count = v.attempt_count, next_attempt_at = v.next_attempt_at, lease_token = null, leased_at = null, lease_expires_at = null,
        last_attempt_at = v.last_attempt_at, last_response_status = v.last_response_status, last_error = v.last_error, finished_at = v.finished_at
      from ${outcomes} as v
      where webhook_deliveries.id = v.id and webhook_deliveries.lease_token = v.lease_token
      returning webhook_deliveries.id, webhook_deliveries.endpoint_id`
  }

  /** Records the attempts of `outcomes` (those for which `condition` on `a.delivery_id` holds). */
  #attemptsInsert(outcomes: readonly AttemptOutcome[], condition: RawBuilder<unknown> = sql`true`): RawBuilder<unknown> {
    const attempts = jsonRows(
      this.features,
      { delivery_id: 'text', number: 'integer', account_id: 'text', started_at: 'bigint', duration_ms: 'integer', response_status: 'integer', error: 'text', response_excerpt: 'text' },
      outcomes.map((outcome) => ({
        delivery_id: outcome.delivery.id,
        number: outcome.delivery.attemptNumber,
        account_id: outcome.delivery.accountId,
        started_at: outcome.startedAt,
        duration_ms: outcome.durationMs,
        response_status: outcome.responseStatus,
        error: outcome.error,
        response_excerpt: outcome.responseExcerpt,
      })),
    )
    // SQLite needs a WHERE to read ON CONFLICT as the upsert clause rather than a join constraint.
    return sql`
      insert into webhook_attempts (delivery_id, number, account_id, started_at, duration_ms, response_status, error, response_excerpt)
      select delivery_id, number, account_id, started_at, duration_ms, response_status, error, response_excerpt from ${attempts} as a where ${condition}
      on conflict do nothing`
  }

  /**
   * `complete` for a batch of successes on PostgreSQL, the common case: one statement, which commits on its own, in
   * place of a transaction's five round trips. Successes record no event and disable no endpoint; they only end
   * their endpoints' runs of failures.
   */
  async #completeSuccesses(plans: readonly CompletionPlan[], now: number): Promise<Array<{ status: DeliveryStatus }>> {
    const [ended, released] = releaseLeases(sql`lease_counts`, now)
    const { rows } = await sql<{ id: string }>`
      with applied as (${this.#applyQuery(plans)}),
      attempts as (${this.#attemptsInsert(plans.map((plan) => plan.outcome), sql`a.delivery_id in (select id from applied)`)}),
      recovered as (${this.#endFailureRuns(this.db, sql<string>`(select endpoint_id from applied)`)}),
      lease_counts as ${this.#leaseCounts(plans)},
      ended as (${ended}),
      released as (${released})
      select id from applied`.execute(this.db)
    return rows.map(() => ({ status: 'succeeded' }))
  }

  /** A success ends its endpoint's run of failures. Several endpoints are locked in the order of their ids. */
  #endFailureRuns(db: Kysely<DB>, endpointIds: readonly string[] | RawBuilder<string>) {
    let failing = db.selectFrom('webhook_endpoints').select('id').where('id', 'in', endpointIds).where('failing_since', 'is not', null).orderBy('id')
    if (this.features.rowLocks) failing = failing.forNoKeyUpdate()
    return db.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', 'in', failing)
  }

  /**
   * An endpoint that fails without a single success for the account's `webhook_disable_after` is disabled, and
   * one that answers 410 Gone is disabled at once; a success ends a run of failures.
   */
  async #trackEndpointHealth(tx: Tx, plans: readonly CompletionPlan[], now: number): Promise<void> {
    const succeeded = new Set(plans.filter((plan) => plan.status === 'succeeded').map((plan) => plan.outcome.delivery.endpointId))
    const failing = new Set(plans.filter((plan) => plan.status !== 'succeeded').map((plan) => plan.outcome.delivery.endpointId))
    for (const id of succeeded) failing.delete(id)
    const gone = new Set(plans.filter((plan) => plan.outcome.responseStatus === 410).map((plan) => plan.outcome.delivery.endpointId))
    if (succeeded.size > 0) await this.#endFailureRuns(tx.db, [...succeeded]).execute()
    if (failing.size === 0) return
    await tx.db.updateTable('webhook_endpoints').set({ failing_since: now }).where('id', 'in', [...failing]).where('failing_since', 'is', null).execute()
    // In the order of their ids, in which a disable's FOR UPDATE is taken on each (see insertDeliveries).
    const rows = await tx.db.selectFrom('webhook_endpoints').selectAll().where('id', 'in', [...failing]).where('status', '=', 'active').orderBy('id').execute()
    for (const row of rows) {
      // Read in the transaction: on SQLite it holds the only connection, which a cache miss would wait for.
      const settings = await this.settings.read(tx.db, row.account_id)
      const limitMs = (settings?.webhook_disable_after ?? Number.POSITIVE_INFINITY) * 1000
      if (gone.has(row.id)) await this.endpoints.disable(tx, row, 'gone', now)
      else if (row.failing_since !== null && now - row.failing_since >= limitMs) await this.endpoints.disable(tx, row, 'failing', now)
    }
  }
}

interface CompletionPlan {
  outcome: AttemptOutcome
  status: DeliveryStatus
  nextAttemptAt: number | null
  finishedAt: number | null
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    ;[items[i], items[j]] = [items[j]!, items[i]!]
  }
  return items
}
