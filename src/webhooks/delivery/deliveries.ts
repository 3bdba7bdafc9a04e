import { type Kysely, type SqlBool, sql } from 'kysely'
import { type Clock, optionalRfc3339, toRfc3339 } from '../../platform/clock.js'
import { ProblemError, notFound } from '../../platform/http/problems.js'
import { idBoundary, looksLikeId } from '../../platform/ids.js'
import { decodeCursor, type Page, toPage } from '../../platform/pagination.js'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { DB, DeliveryStatus, WebhookDeliveriesTable } from '../../platform/storage/schema.js'
import { transaction } from '../../platform/storage/transaction.js'
import { type DeliveryDetail, deliveryDetail } from './delivery-detail.js'
import { notForClaims } from './leases.js'
import { endpointStatusForWrites, requeue } from './requeue.js'
import type { WakeSignal } from './wake.js'

export interface DeliveryView {
  id: string
  event_id: string
  event_type: string
  endpoint_id: string
  status: DeliveryStatus
  attempt_count: number
  last_response_status: number | null
  last_error: string | null
  last_attempt_at: string | null
  next_attempt_at: string | null
  created_at: string
}

export interface DeliveryFilter {
  endpoint_id?: string
  event_id?: string
  event_type?: string
  status?: DeliveryStatus
  /** Epoch ms, inclusive. */
  since?: number
  /** Epoch ms, exclusive. */
  until?: number
}

/**
 * The condition of the index of an endpoint's deliveries that did not succeed (webhook_deliveries_endpoint_status_idx),
 * for a query of such deliveries to state: SQLite uses a partial index only when the query states its condition
 * itself, and PostgreSQL only when it follows from the query's (which the account's part never does unless stated).
 */
export const ON_UNSUCCEEDED_INDEX = sql<SqlBool>`status <> 'succeeded' and ${notForClaims('webhook_deliveries')}`

/**
 * The ids of an endpoint's deliveries in `status`, in id order, on the index of its deliveries that did not succeed:
 * a job that takes them in batches, each going on from the last id the one before took, reads what it takes and not
 * the endpoint's whole history.
 */
export function endpointDeliveriesIn(db: Kysely<DB>, accountId: string, endpointId: string, status: Exclude<DeliveryStatus, 'succeeded'>) {
  return forAccount(db, accountId).selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', endpointId).where('status', '=', status).where(ON_UNSUCCEEDED_INDEX).orderBy('id')
}

/** A delivery waiting for its endpoint to be enabled: due at no time. */
export const HOLDING = { status: 'held', next_attempt_at: null } as const

/** A delivery of a deleted endpoint, finished. Its lease is cleared, so an attempt still in flight records nothing. */
export function cancellation(now: number) {
  return { status: 'cancelled', next_attempt_at: null, lease_token: null, lease_expires_at: null, finished_at: now } as const
}

/**
 * Reading deliveries and retrying them by hand. Lists are newest first and paged by id: ids sort by creation
 * time, so the time range is an id range too, and every filter walks an index that ends in the id.
 */
export class Deliveries {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: SqlDialect,
    private readonly clock: Clock,
    private readonly wake: WakeSignal,
  ) {}

  async list(accountId: string, filter: DeliveryFilter, limit: number, cursor: string | undefined): Promise<Page<DeliveryView>> {
    const before = decodeCursor(cursor)
    let query = forAccount(this.db, accountId).listFrom('webhook_deliveries', 'desc').selectAll().limit(limit + 1)
    if (before !== undefined) query = query.where('id', '<', before)
    if (filter.until !== undefined) query = query.where('id', '<', idBoundary('dlv', filter.until))
    if (filter.since !== undefined) query = query.where('id', '>=', idBoundary('dlv', filter.since))
    if (filter.endpoint_id !== undefined) query = query.where('endpoint_id', '=', filter.endpoint_id)
    if (filter.event_id !== undefined) query = query.where('event_id', '=', filter.event_id)
    if (filter.event_type !== undefined) query = query.where('event_type', '=', filter.event_type)
    if (filter.status !== undefined) query = query.where('status', '=', filter.status)
    if (filter.endpoint_id !== undefined && filter.status !== undefined && filter.status !== 'succeeded') query = query.where(ON_UNSUCCEEDED_INDEX)
    const rows = await query.execute()
    return toPage(rows, limit, (row) => row.id, toView)
  }

  /** The delivery with the body its attempts sent and every attempt with its request, first to last. */
  async get(accountId: string, deliveryId: string): Promise<DeliveryView & DeliveryDetail> {
    const row = await this.#existing(this.db, accountId, deliveryId)
    const account = forAccount(this.db, accountId)
    const [attempts, event, endpoint] = await Promise.all([
      account.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('number').execute(),
      account.selectFrom('events').select(['type', 'data', 'created_at']).where('id', '=', row.event_id).executeTakeFirst(),
      account.selectFrom('webhook_endpoints').select('client_id').where('id', '=', row.endpoint_id).executeTakeFirst(),
    ])
    return { ...toView(row), ...deliveryDetail(row.event_id, event, attempts, endpoint && endpoint.client_id !== null) }
  }

  /**
   * Queues one more attempt now, or, when the endpoint is disabled, holds it until the endpoint is enabled. A
   * failed delivery that fails again is failed again (its schedule stays spent); a succeeded one is sent again.
   * A cancelled delivery has no endpoint to go to, nor has a held one while its endpoint is disabled; once the
   * endpoint is enabled, a held one that the enable's sweep has not reached yet is released by the retry.
   */
  async retry(accountId: string, deliveryId: string): Promise<DeliveryView> {
    return transaction(this.db, async (tx) => {
      const row = await this.#existing(tx.db, accountId, deliveryId)
      if (row.status === 'cancelled') throw new ProblemError('conflict', 'The endpoint was deleted: this delivery was cancelled')
      if (row.lease_token !== null) throw new ProblemError('conflict', 'An attempt of this delivery is in flight')
      const now = this.clock.now()
      const endpointStatus = await endpointStatusForWrites(tx, this.dialect, accountId, row.endpoint_id)
      // Finished before its endpoint was deleted (deleting cancels only what had not finished), or waiting for the
      // delete's sweep to cancel it: nowhere to send it.
      if (endpointStatus === undefined) throw new ProblemError('conflict', 'The endpoint was deleted: this delivery has nowhere to go')
      if (row.status === 'held' && endpointStatus === 'disabled') throw new ProblemError('conflict', 'The endpoint is disabled: enable it and its held deliveries flow')
      const { changes, requeued } = await requeue(tx, this.wake, accountId, [row.id], row.status, endpointStatus === 'active', now)
      if (requeued === 0) {
        // Changed since it was read: deleted by retention (404), leased by a worker, or retried by another request.
        await this.#existing(tx.db, accountId, deliveryId)
        throw new ProblemError('conflict', 'The delivery changed while it was being retried (another attempt started); read it again')
      }
      return toView({ ...row, ...changes })
    })
  }

  async #existing(db: Kysely<DB>, accountId: string, deliveryId: string): Promise<WebhookDeliveriesTable> {
    const row = looksLikeId('dlv', deliveryId)
      ? await forAccount(db, accountId).selectFrom('webhook_deliveries').selectAll().where('id', '=', deliveryId).executeTakeFirst()
      : undefined
    if (!row) throw notFound(`Delivery ${deliveryId}`)
    return row
  }
}

export function toView(row: WebhookDeliveriesTable): DeliveryView {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type,
    endpoint_id: row.endpoint_id,
    status: row.status,
    attempt_count: row.attempt_count,
    last_response_status: row.last_response_status,
    last_error: row.last_error,
    last_attempt_at: optionalRfc3339(row.last_attempt_at),
    // In flight, the delivery is next attempted if its lease runs out (as DUE_SINCE reads it in SQL).
    next_attempt_at: optionalRfc3339(row.lease_expires_at ?? row.next_attempt_at),
    created_at: toRfc3339(row.created_at),
  }
}
