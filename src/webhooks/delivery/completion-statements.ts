import { type RawBuilder, sql } from 'kysely'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import type { DeliveryStatus } from '../../platform/storage/schema.js'
import type { AttemptOutcome } from './attempt.js'
import { countsPerLease } from './leases.js'
import { countAttempts } from '../endpoints/endpoint-stats.js'

/** What an attempt's outcome makes of its delivery (see DeliveryCompletions). */
export interface CompletionPlan {
  outcome: AttemptOutcome
  status: DeliveryStatus
  nextAttemptAt: number | null
  finishedAt: number | null
}

/**
 * The deliveries of `plans` per lease and endpoint, to release (see releaseLeases). Every plan counts, applied
 * or not: one that was not had lost its lease (it ran out, or the endpoint was deleted while the attempt was in
 * flight), and such a lease's count no longer matters.
 */
export function leaseCounts(dialect: SqlDialect, plans: readonly CompletionPlan[]): RawBuilder<unknown> {
  return countsPerLease(dialect, plans.map(({ outcome }) => outcome.delivery))
}

/** One fenced UPDATE for the whole batch; answers the deliveries whose lease still held. */
export function applyPlans(dialect: SqlDialect, plans: readonly CompletionPlan[]): RawBuilder<{ id: string; endpoint_id: string }> {
  const outcomes = dialect.jsonRows(
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
export function insertAttempts(dialect: SqlDialect, outcomes: readonly AttemptOutcome[], condition: RawBuilder<unknown> = sql`true`): RawBuilder<unknown> {
  const attempts = dialect.jsonRows(
    { delivery_id: 'text', number: 'integer', account_id: 'text', started_at: 'bigint', duration_ms: 'integer', response_status: 'integer', error: 'text', response_excerpt: 'text', request_url: 'text', request_signature: 'text' },
    outcomes.map((outcome) => ({
      delivery_id: outcome.delivery.id,
      number: outcome.delivery.attemptNumber,
      account_id: outcome.delivery.accountId,
      started_at: outcome.startedAt,
      duration_ms: outcome.durationMs,
      response_status: outcome.responseStatus,
      error: outcome.error,
      response_excerpt: outcome.responseExcerpt,
      request_url: outcome.request?.url ?? null,
      request_signature: outcome.request?.signature ?? null,
    })),
  )
  // SQLite needs a WHERE to read ON CONFLICT as the upsert clause rather than a join constraint.
  return sql`
    insert into webhook_attempts (delivery_id, number, account_id, started_at, duration_ms, response_status, error, response_excerpt, request_url, request_signature)
    select delivery_id, number, account_id, started_at, duration_ms, response_status, error, response_excerpt, request_url, request_signature from ${attempts} as a where ${condition}
    on conflict do nothing`
}

/** Adds the attempts of `outcomes` (those for which `condition` on `a.delivery_id` holds) to their endpoints' hourly counts. */
export function countOutcomes(dialect: SqlDialect, outcomes: readonly AttemptOutcome[], condition?: RawBuilder<unknown>): RawBuilder<unknown> {
  const attempts = outcomes.map(({ delivery, startedAt, responseStatus, durationMs }) => ({ deliveryId: delivery.id, accountId: delivery.accountId, endpointId: delivery.endpointId, startedAt, responseStatus, durationMs }))
  return countAttempts(dialect, attempts, condition)
}
