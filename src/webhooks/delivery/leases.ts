import { type RawBuilder, type SqlBool, sql } from 'kysely'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import type { WebhookDeliveriesTable } from '../../platform/storage/schema.js'

/**
 * The SQL of delivery leases. A lease lives on its delivery row (`lease_token`, `leased_at`, `lease_expires_at`)
 * and changes no indexed column, so on PostgreSQL it can be a HOT update. Leased rows therefore keep their place
 * in the queue index, and what that index can't tell, how many deliveries an endpoint has in flight, is kept in
 * `webhook_leases`: one row per claim and endpoint, counted down as the claim's outcomes are recorded.
 */

/** The rows of `table` not under a lease that still runs at `now`: never leased, released, or lost. */
export function notLeased(table: 'd' | 'webhook_deliveries', now: number): RawBuilder<SqlBool> {
  const expires = sql.ref(`${table}.lease_expires_at`)
  return sql<SqlBool>`(${expires} is null or ${expires} <= ${now})`
}

/**
 * The rows of `table` a claim may take: pending, due, and not leased. A claim reads past the endpoint's leased
 * rows in the queue index, about its cap's worth.
 */
export function claimable(table: 'd' | 'webhook_deliveries', now: number): RawBuilder<SqlBool> {
  const column = (name: keyof WebhookDeliveriesTable) => sql.ref(`${table}.${name}`)
  return sql<SqlBool>`${column('status')} = 'pending' and ${column('next_attempt_at')} <= ${now} and ${notLeased(table, now)}`
}

/**
 * True of every delivery, and stated by the queries that read the partial indexes over waiting deliveries that a claim
 * must not use (see migrations/baseline/tables.ts): such an index serves only queries that state its whole condition,
 * and no claim names an account.
 */
export function notForClaims(table: 'd' | 'webhook_deliveries'): RawBuilder<SqlBool> {
  return sql<SqlBool>`${sql.ref(`${table}.account_id`)} <> ''`
}

/**
 * The claimable rows of `table` that are the queue's: those to an active endpoint, as a claim asks endpoint by
 * endpoint. A disabled or deleted endpoint's pending deliveries wait, for the seconds its status sweep takes, to be
 * held or cancelled, and no claim takes them. A suspended account's stay: they wait for the account, as long as it
 * takes, and the queue shows them. Read across endpoints, on the index of every due delivery.
 */
export function queued(table: 'd' | 'webhook_deliveries', now: number): RawBuilder<SqlBool> {
  return sql<SqlBool>`${claimable(table, now)} and ${notForClaims(table)} and exists (select 1 from webhook_endpoints as e where e.id = ${sql.ref(`${table}.endpoint_id`)} and e.status = 'active')`
}

/** Since when a claimable delivery has been due: its due time, or the end of the lease it lost, which is later. */
export const DUE_SINCE = sql<number>`coalesce(lease_expires_at, next_attempt_at)`

/** How many of `deliveries` go to each endpoint. */
export function perEndpoint(deliveries: ReadonlyArray<{ endpoint_id: string }>): Map<string, number> {
  const counts = new Map<string, number>()
  for (const { endpoint_id: endpointId } of deliveries) counts.set(endpointId, (counts.get(endpointId) ?? 0) + 1)
  return counts
}

/** `deliveries` counted per lease and endpoint, as rows (lease_token, endpoint_id, n). */
export function countsPerLease(dialect: SqlDialect, deliveries: ReadonlyArray<{ leaseToken: string; endpointId: string }>): RawBuilder<unknown> {
  const counts = new Map<string, { lease_token: string; endpoint_id: string; n: number }>()
  for (const { leaseToken, endpointId } of deliveries) {
    const key = `${leaseToken} ${endpointId}`
    const count = counts.get(key)
    if (count) count.n++
    else counts.set(key, { lease_token: leaseToken, endpoint_id: endpointId, n: 1 })
  }
  return dialect.jsonRows({ lease_token: 'text', endpoint_id: 'text', n: 'integer' }, [...counts.values()])
}

/**
 * Takes recorded deliveries off their leases' counts, given as rows (lease_token, endpoint_id, n); a count that
 * reaches zero goes. Two statements, whose conditions part the lease rows between them, so that both can run in
 * one WITH. Leases that ran out by `now` are left alone: they count for nothing, and the pruner deletes them
 * without waiting for a completion that still holds one.
 */
export function releaseLeases(counts: RawBuilder<unknown>, now: number): [RawBuilder<unknown>, RawBuilder<unknown>] {
  const matches = sql`c.lease_token = webhook_leases.lease_token and c.endpoint_id = webhook_leases.endpoint_id and webhook_leases.expires_at > ${now}`
  return [
    sql`delete from webhook_leases where exists (select 1 from ${counts} as c where ${matches} and webhook_leases.outstanding <= c.n)`,
    sql`update webhook_leases set outstanding = webhook_leases.outstanding - c.n from ${counts} as c where ${matches} and webhook_leases.outstanding > c.n`,
  ]
}
