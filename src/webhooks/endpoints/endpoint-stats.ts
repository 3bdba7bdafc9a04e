import { type Kysely, type RawBuilder, sql } from 'kysely'
import { type Clock, toRfc3339 } from '../../platform/clock.js'
import { ProblemError, notFound } from '../../platform/http/problems.js'
import { looksLikeId } from '../../platform/ids.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import type { DB } from '../../platform/storage/schema.js'
import { isSuccess } from '../delivery/attempt.js'

const HOUR_MS = 3600_000
/** How far back the hourly counts go: they are pruned after this. */
export const STATS_DAYS = 31
const BUCKET_MS = { hour: HOUR_MS, day: 24 * HOUR_MS } as const
export type StatsBucket = keyof typeof BUCKET_MS

/** One attempt, as the hourly counts see it. */
export interface CountedAttempt {
  accountId: string
  endpointId: string
  startedAt: number
  responseStatus: number | null
  durationMs: number | null
}

export interface StatsBucketView {
  start: string
  succeeded: number
  failed: number
  errored: number
  /** Over the answered attempts; null when none was answered. */
  mean_duration_ms: number | null
  max_duration_ms: number | null
}

export interface EndpointStatsView {
  endpoint_id: string
  bucket: StatsBucket
  since: string
  until: string
  data: StatsBucketView[]
}

/**
 * Adds `attempts` (those whose `a.delivery_id` meets `condition`, when given) to their endpoints' hourly counts,
 * one upsert for the batch. Rows are written in key order, as every batch does, so two batches never wait for each
 * other's rows in opposite orders; every caller has locked the attempts' endpoints first (completions, claims), so
 * endpoint rows and then hour rows is the one order of all.
 */
export function countAttempts(dialect: SqlDialect, attempts: ReadonlyArray<CountedAttempt & { deliveryId: string }>, condition: RawBuilder<unknown> = sql`true`): RawBuilder<unknown> {
  const rows = dialect.jsonRows(
    { delivery_id: 'text', account_id: 'text', endpoint_id: 'text', hour: 'bigint', succeeded: 'integer', failed: 'integer', errored: 'integer', duration_ms: 'integer' },
    attempts.map((attempt) => {
      const answered = attempt.responseStatus !== null
      const succeeded = isSuccess(attempt.responseStatus)
      return {
        delivery_id: attempt.deliveryId,
        account_id: attempt.accountId,
        endpoint_id: attempt.endpointId,
        hour: attempt.startedAt - (attempt.startedAt % HOUR_MS),
        succeeded: succeeded ? 1 : 0,
        failed: answered && !succeeded ? 1 : 0,
        errored: answered ? 0 : 1,
        duration_ms: answered ? (attempt.durationMs ?? 0) : 0,
      }
    }),
  )
  const kept = sql.ref('webhook_endpoint_hours')
  return sql`
    insert into webhook_endpoint_hours (endpoint_id, hour, account_id, succeeded, failed, errored, duration_ms_sum, duration_ms_max)
    select endpoint_id, hour, min(account_id), sum(succeeded), sum(failed), sum(errored), sum(duration_ms), max(duration_ms)
    from ${rows} as a where ${condition}
    group by endpoint_id, hour order by endpoint_id, hour
    on conflict (endpoint_id, hour) do update set
      succeeded = ${kept}.succeeded + excluded.succeeded, failed = ${kept}.failed + excluded.failed, errored = ${kept}.errored + excluded.errored,
      duration_ms_sum = ${kept}.duration_ms_sum + excluded.duration_ms_sum,
      duration_ms_max = case when excluded.duration_ms_max > ${kept}.duration_ms_max then excluded.duration_ms_max else ${kept}.duration_ms_max end`
}

/**
 * An endpoint's recent attempts per hour or day, by outcome, with the answered ones' mean and longest duration (for
 * the console's charts), read from its hourly counts: at most a few hundred rows, whatever its history holds.
 */
export class EndpointStats {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: SqlDialect,
    private readonly clock: Clock,
  ) {}

  async read(accountId: string, endpointId: string, bucket: StatsBucket, since: number | undefined, until: number | undefined): Promise<EndpointStatsView> {
    const size = BUCKET_MS[bucket]
    const now = this.clock.now()
    const oldest = now - STATS_DAYS * 24 * HOUR_MS
    if (until !== undefined && until <= oldest) throw rangeProblem('until', `until must lie within the last ${STATS_DAYS} days`)
    if (since !== undefined && since < oldest) throw rangeProblem('since', `since may go back ${STATS_DAYS} days at most`)
    // Whole buckets, the last one holding `until` (now by default, and no later), the first one holding `since` (a
    // day back by default): never more than STATS_DAYS days of them, since both ends lie within those days.
    const end = floorTo(Math.min(until ?? now, now) - 1, size) + size
    const start = floorTo(since ?? end - 24 * HOUR_MS, size)
    if (start >= end) throw rangeProblem('since', 'since must be before until')
    const endpoint = looksLikeId('ep', endpointId) ? await forAccount(this.db, accountId).selectFrom('webhook_endpoints').select('id').where('id', '=', endpointId).executeTakeFirst() : undefined
    if (!endpoint) throw notFound(`Endpoint ${endpointId}`)
    const hours = await forAccount(this.db, accountId)
      .selectFrom('webhook_endpoint_hours')
      .selectAll()
      .where('endpoint_id', '=', endpointId)
      .where('hour', '>=', start)
      .where('hour', '<', end)
      .execute()
    const buckets = new Map<number, { succeeded: number; failed: number; errored: number; sum: number; max: number }>()
    for (let at = start; at < end; at += size) buckets.set(at, { succeeded: 0, failed: 0, errored: 0, sum: 0, max: 0 })
    for (const row of hours) {
      const into = buckets.get(floorTo(Number(row.hour), size))!
      into.succeeded += row.succeeded
      into.failed += row.failed
      into.errored += row.errored
      into.sum += Number(row.duration_ms_sum)
      into.max = Math.max(into.max, row.duration_ms_max)
    }
    const data = [...buckets].map(([at, counts]) => {
      const answered = counts.succeeded + counts.failed
      return {
        start: toRfc3339(at),
        succeeded: counts.succeeded,
        failed: counts.failed,
        errored: counts.errored,
        mean_duration_ms: answered === 0 ? null : Math.round(counts.sum / answered),
        max_duration_ms: answered === 0 ? null : counts.max,
      }
    })
    return { endpoint_id: endpointId, bucket, since: toRfc3339(start), until: toRfc3339(end), data }
  }

  /** Housekeeping across every account: hours older than STATS_DAYS, at most `limit` at a time. */
  async pruneOld(limit: number): Promise<number> {
    const before = floorTo(this.clock.now(), HOUR_MS) - (STATS_DAYS + 1) * 24 * HOUR_MS
    return this.dialect.deleteBatch(this.db, 'webhook_endpoint_hours', { condition: sql`hour < ${before}`, orderBy: 'hour', limit })
  }
}

function floorTo(ms: number, size: number): number {
  return ms - (((ms % size) + size) % size)
}

function rangeProblem(parameter: 'since' | 'until', message: string): ProblemError {
  return new ProblemError('validation_failed', message, [{ pointer: `/querystring/${parameter}`, message }])
}
