import { newId } from '../ids.js'
import type { Tx } from '../storage/transaction.js'

/**
 * Records an event in the outbox, inside the transaction that makes the change it announces: the change and
 * its event commit together or not at all. `data` describes the resource and must never hold a secret.
 */
export async function recordEvent(tx: Tx, accountId: string, type: string, data: object, now: number): Promise<string> {
  const id = newId('evt', now)
  await tx.db
    .insertInto('events')
    .values({ id, account_id: accountId, type, data: JSON.stringify(data), created_at: now })
    .execute()
  return id
}
