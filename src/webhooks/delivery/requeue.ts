import { forAccount } from '../../platform/storage/account-queries.js'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import type { DeliveryStatus, EndpointStatus } from '../../platform/storage/schema.js'
import type { Tx } from '../../platform/storage/transaction.js'
import type { WakeSignal } from './wake.js'

/**
 * The status of the endpoint whose deliveries are about to be queued again (a retry, a recovery job) or changed by a
 * status sweep, or undefined when it is gone. On PostgreSQL the row is locked FOR KEY SHARE until the transaction
 * ends, as new deliveries' endpoints are (see insertDeliveries), because the status decides what the deliveries
 * become: disabling, enabling or deleting the endpoint waits for the write to commit, and then sees its deliveries
 * (and holds, releases or cancels them). Read without the lock, a retry racing a delete left a pending delivery of
 * an endpoint that no longer existed, which no worker would ever claim.
 */
export async function endpointStatusForWrites(tx: Tx, dialect: SqlDialect, accountId: string, endpointId: string): Promise<EndpointStatus | undefined> {
  const query = forAccount(tx.db, accountId).selectFrom('webhook_endpoints').select('status').where('id', '=', endpointId)
  return (await dialect.forKeyShare(query).executeTakeFirst())?.status
}

/**
 * Gives deliveries of one endpoint, read as `from`, another attempt (a manual retry, a recovery job): `pending` and
 * due at once when the endpoint is active, `held` when it is disabled (its status read by endpointStatusForWrites).
 * A pending delivery of a disabled endpoint would look due (in the queue metrics too) while no worker claims it, and
 * enabling the endpoint releases held ones anyway. A delivery whose status is no longer `from` is left alone (sent
 * again and finished meanwhile, it would be sent once more), as is one a worker holds right now and one deleted
 * meanwhile (by retention). Answers the columns it set and how many deliveries it changed.
 */
export async function requeue(tx: Tx, wake: WakeSignal, accountId: string, deliveryIds: readonly string[], from: DeliveryStatus, endpointActive: boolean, now: number) {
  const changes = { status: endpointActive ? 'pending' : 'held', next_attempt_at: endpointActive ? now : null, finished_at: null } as const
  if (deliveryIds.length === 0) return { changes, requeued: 0 }
  const result = await forAccount(tx.db, accountId).updateTable('webhook_deliveries').set(changes).where('id', 'in', deliveryIds).where('status', '=', from).where('lease_token', 'is', null).executeTakeFirst()
  const requeued = Number(result.numUpdatedRows)
  if (endpointActive && requeued > 0) await wake.send(tx, 'deliveries')
  return { changes, requeued }
}
