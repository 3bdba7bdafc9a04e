import type { QueryCreator } from 'kysely'
import type { DB, EventIdempotencyKeysTable } from '../../platform/storage/schema.js'

/**
 * Claims idempotency keys, each unless a live claim exists (an expired one is taken over), returning the
 * `event_id` of each claim won. One statement, so two concurrent publishes with one key can't both win; the
 * loser's insert waits for the winner's commit and then finds its claim. `claims` must hold each key once, in
 * key order, so concurrent batches lock the keys they share in the same order and never deadlock.
 */
export function claimKeys(db: QueryCreator<DB>, claims: readonly EventIdempotencyKeysTable[], now: number) {
  return db
    .insertInto('event_idempotency_keys')
    .values(claims)
    .onConflict((conflict) =>
      conflict
        .columns(['account_id', 'key'])
        .doUpdateSet((eb) => ({ event_id: eb.ref('excluded.event_id'), request_hash: eb.ref('excluded.request_hash'), expires_at: eb.ref('excluded.expires_at') }))
        .where('event_idempotency_keys.expires_at', '<=', now),
    )
    .returning('event_id')
}
