import type { Tx } from '../../platform/storage/transaction.js'
import type { WakeSignal } from './wake.js'

/**
 * Gives finished deliveries of one endpoint another attempt (a manual retry, a recovery job): `pending` and due at
 * once when the endpoint is active, `held` when it is disabled. A pending delivery of a disabled endpoint would look
 * due (in the queue metrics too) while no worker claims it, and enabling the endpoint releases held ones anyway.
 * A delivery a worker holds right now is left alone. Answers the columns it set.
 */
export async function requeue(tx: Tx, wake: WakeSignal, deliveryIds: readonly string[], endpointActive: boolean, now: number) {
  const changes = { status: endpointActive ? 'pending' : 'held', next_attempt_at: endpointActive ? now : null, finished_at: null } as const
  if (deliveryIds.length === 0) return changes
  await tx.db.updateTable('webhook_deliveries').set(changes).where('id', 'in', deliveryIds).where('lease_token', 'is', null).execute()
  if (endpointActive) await wake.send(tx, 'deliveries')
  return changes
}
