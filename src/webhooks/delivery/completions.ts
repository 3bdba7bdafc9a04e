import type { Kysely } from 'kysely'
import type { Clock } from '../../platform/clock.js'
import type { Outbox } from '../../platform/events/outbox.js'
import type { SettingsStore } from '../../platform/settings/settings.js'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import type { DB, DeliveryStatus, EndpointStatus } from '../../platform/storage/schema.js'
import { type Tx, transaction } from '../../platform/storage/transaction.js'
import { isOperationalType } from '../events/event-types.js'
import { type AttemptOutcome, isSuccess } from './attempt.js'
import { cancellation, HOLDING } from './deliveries.js'
import type { DisabledEndpoint, EndpointHealth } from './endpoint-health.js'
import { applyPlans, type CompletionPlan, countOutcomes, insertAttempts, leaseCounts } from './completion-statements.js'
import { releaseLeases } from './leases.js'
import { nextAttemptAt } from './retry-schedule.js'
import type { CompletionSql } from './sql/completion-sql.js'
import { completionSqlFor } from './sql/index.js'

/** What a batch of completions did, beyond the attempts it recorded. */
export interface CompletionReport {
  /** The deliveries that reached a final status. */
  finished: Array<{ status: DeliveryStatus }>
  /** The last attempts of the deliveries that ended `failed`, their schedules exhausted. */
  failed: AttemptOutcome[]
  /** The endpoints that these attempts disabled (410 Gone, or failing for too long). */
  disabled: DisabledEndpoint[]
  /** When the earliest retry that these completions scheduled is due; null when they scheduled none. */
  nextRetryAt: number | null
}

const nothingCompleted = (): CompletionReport => ({ finished: [], failed: [], disabled: [], nextRetryAt: null })

/**
 * The end of attempts: each batch of outcomes is written in one fenced update (a worker that lost its lease can't
 * overwrite the new owner's result), with the attempts' records, the leases' release, the endpoints' health and the
 * failure events. Cross-account: a batch holds the outcomes of any accounts' claimed deliveries, written by id.
 */
export class DeliveryCompletions {
  readonly #sql: CompletionSql

  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: SqlDialect,
    private readonly clock: Clock,
    private readonly settings: SettingsStore,
    private readonly health: EndpointHealth,
    private readonly outbox: Outbox,
  ) {
    this.#sql = completionSqlFor(dialect, health)
  }

  /**
   * Records a batch of attempts and moves each delivery on: `succeeded`, `pending` for its next retry, `held`
   * when its endpoint is disabled (`cancelled` when it is gone), or `failed` when the schedule is exhausted.
   * Outcomes whose lease was lost are discarded.
   */
  async complete(outcomes: readonly AttemptOutcome[]): Promise<CompletionReport> {
    if (outcomes.length === 0) return nothingCompleted()
    const now = this.clock.now()
    const plans = await Promise.all(outcomes.map((outcome) => this.#plan(outcome, now)))
    const completed = plans.every((plan) => plan.status === 'succeeded') ? this.#sql.completeSuccesses(this.db, plans, now) : undefined
    if (completed) return { ...nothingCompleted(), finished: await completed }
    return transaction(this.db, async (tx) => {
      const kept = new Set(await this.#apply(tx, plans))
      for (const statement of releaseLeases(leaseCounts(this.dialect, plans), now)) await statement.execute(tx.db)
      const applied = plans.filter((plan) => kept.has(plan.outcome.delivery.id))
      if (applied.length === 0) return nothingCompleted()
      await this.#holdOrCancelRetries(tx, applied, await this.#lockEndpoints(tx, applied), now)
      const outcomes = applied.map((plan) => plan.outcome)
      await insertAttempts(this.dialect, outcomes).execute(tx.db)
      await countOutcomes(this.dialect, outcomes).execute(tx.db)
      const disabled = await this.health.record(
        tx,
        applied.map(({ outcome, status }) => ({ endpointId: outcome.delivery.endpointId, succeeded: status === 'succeeded', responseStatus: outcome.responseStatus })),
        now,
      )
      const failed = applied.filter((plan) => plan.status === 'failed').map((plan) => plan.outcome)
      await this.outbox.recordAll(
        tx,
        failed.filter((outcome) => !isOperationalType(outcome.delivery.eventType)).map(({ delivery, responseStatus, error }) => ({
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
      const retries = applied.flatMap((plan) => (plan.status === 'pending' && plan.nextAttemptAt !== null ? [plan.nextAttemptAt] : []))
      return {
        finished: applied.filter((plan) => plan.finishedAt !== null).map((plan) => ({ status: plan.status })),
        failed,
        disabled,
        nextRetryAt: retries.length > 0 ? Math.min(...retries) : null,
      }
    })
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
    const endpoints = tx.db.selectFrom('webhook_endpoints').select(['id', 'status']).where('id', 'in', [...new Set(plans.map((plan) => plan.outcome.delivery.endpointId))]).orderBy('id')
    return new Map((await this.dialect.forNoKeyUpdate(endpoints).execute()).map((row) => [row.id, row.status]))
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
    const { rows } = await applyPlans(this.dialect, plans).execute(tx.db)
    return rows.map((row) => row.id)
  }
}
