import { type Expression, type ExpressionBuilder, type SelectQueryBuilder, sql } from 'kysely'
import type { DB, WebhookDeliveriesTable } from '../../../platform/storage/schema.js'
import type { Tx } from '../../../platform/storage/transaction.js'

/** The SQL of a claim that differs between the dialects; one implementation each, chosen in ./index.ts. */
export interface ClaimSql {
  /** Serialises claims across processes, so per-endpoint caps count every process's leases. */
  lockClaims(tx: Tx): Promise<void>
  /**
   * Locks the rows of the endpoints whose rate windows the claim updates, before their deliveries (the order in which
   * disabling an endpoint takes them), leaving any that another transaction holds; answers the ids it locked.
   */
  lockRateWindows(tx: Tx, endpointIds: readonly string[]): Promise<ReadonlySet<string>>
  /**
   * Leases the picked deliveries that are still claimable and records the lease's count per endpoint in
   * `webhook_leases`; answers each delivery as it was before (a previous lease means a lost attempt), with its event's
   * payload, which the attempt needs.
   */
  lease(tx: Tx, request: LeaseRequest): Promise<LeasedRow[]>
}

export interface LeaseRequest {
  picked: SelectQueryBuilder<DB, never, { id: string }>
  now: number
  leaseToken: string
  leaseEnds: number
  /** The process holding the lease (see DeliveryQueue). */
  holder: string
}

export interface LeasedRow {
  id: string
  account_id: string
  endpoint_id: string
  event_id: string
  event_type: string
  attempt_count: number
  lease_token: string | null
  leased_at: number | null
  data: string
  created_at: number
}

export const LEASED_COLUMNS = ['d.id', 'd.account_id', 'd.endpoint_id', 'd.event_id', 'd.event_type', 'd.attempt_count', 'd.lease_token', 'd.leased_at', 'e.data', 'e.created_at'] as const

/**
 * The columns a lease sets. A lease that ran out: the worker holding it is gone, and whether its attempt reached the
 * receiver is unknown. It counts as an attempt, which started when that lease was taken, and the delivery is tried
 * again at once. SET reads the row as it was, so `leased_at` on the right is the lost lease's. No indexed column
 * changes.
 */
export function leaseChanges({ now, leaseToken, leaseEnds }: LeaseRequest) {
  return (eb: ExpressionBuilder<DB, 'webhook_deliveries'>) => {
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
}
