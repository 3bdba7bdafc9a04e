import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { Outbox } from '../../src/platform/events/outbox.js'
import { newId } from '../../src/platform/ids.js'
import type { EventsTable } from '../../src/platform/storage/schema.js'
import { transaction } from '../../src/platform/storage/transaction.js'
import type { AttemptOutcome, ClaimedDelivery } from '../../src/webhooks/delivery/attempt.js'
import { DeliveryQueue } from '../../src/webhooks/delivery/delivery-queue.js'
import { FanOut } from '../../src/webhooks/delivery/fan-out.js'
import { claimSqlFor } from '../../src/webhooks/delivery/sql/index.js'
import { WakeSignal } from '../../src/webhooks/delivery/wake.js'
import { EndpointStore } from '../../src/webhooks/endpoints/endpoint-store.js'
import { IDEMPOTENCY_WINDOW_MS } from '../../src/webhooks/events/events.js'
import { publishSqlFor } from '../../src/webhooks/events/sql/index.js'
import { forEachDialect, type TestHerald, useHerald } from '../support/herald.js'
import { createAccount } from '../support/http.js'
import { insertBacklog, LOCAL_DELIVERY, subscribedEndpoint, webhookApi } from './support.js'

/**
 * The operations with one implementation per dialect (publish, lease, complete), held to one contract: each test body
 * runs on every dialect, against the implementation that dialect chooses, and reads what it wrote from the tables.
 */
forEachDialect((dialect) => {
  /** A Herald of the enclosing `describe`'s own, whose queue holds its tests' deliveries alone. */
  const herald = () => useHerald(dialect, { ...LOCAL_DELIVERY, worker: false })

  /** An account with an active and a disabled endpoint, both subscribed to `contract.*`. */
  async function endpoints(t: TestHerald) {
    const account = await createAccount(t)
    const api = await webhookApi(account, t.clock)
    const active = await subscribedEndpoint(api, 'http://127.0.0.1:9/active', ['contract.*'])
    const disabled = await subscribedEndpoint(api, 'http://127.0.0.1:9/disabled', ['contract.*'])
    expect((await api.patch(`/webhooks/endpoints/${disabled.id}`, { status: 'disabled' })).status).toBe(200)
    return { accountId: account.id, active: active.id, disabled: disabled.id }
  }

  describe('publish', () => {
    const h = herald()
    it('publish: writes the events whose key it claims, one delivery per subscribed endpoint, and their new types', async () => {
      const { herald, clock } = h.current
      const { db, dialect: sqlDialect } = herald.database
      const { accountId, active, disabled } = await endpoints(h.current)
      const store = new EndpointStore(db, herald.box, herald.invalidation, sqlDialect)
      const publish = publishSqlFor(sqlDialect, db, new FanOut(db, sqlDialect, store, new WakeSignal(herald.notifications), clock))
      const now = clock.now()
      const event = (type: string, key: string | null): EventsTable => ({ id: newId('evt', now), account_id: accountId, type, data: '{}', created_at: now, fanned_out_at: now, idempotency_key: key })
      const claim = (row: EventsTable) => ({ account_id: accountId, key: row.idempotency_key!, event_id: row.id, request_hash: 'h', expires_at: now + IDEMPOTENCY_WINDOW_MS })
      const type = (name: string) => ({ account_id: accountId, name, first_published_at: now })

      const original = event('contract.original', 'taken')
      const first = await publish.write({ now, claims: [claim(original)], events: [original], types: [type('contract.original')] }, async () => 'first')
      expect(first).toEqual({ claimed: new Set([original.id]), answered: 'first' })

      const keyless = event('contract.keyless', null)
      const keyed = event('contract.keyed', 'fresh')
      const replay = event('contract.replay', 'taken')
      const written = await publish.write(
        { now, claims: [claim(keyed), claim(replay)], events: [keyless, keyed, replay], types: [type('contract.keyless'), type('contract.keyed'), type('contract.replay')] },
        // The answer sees what was written.
        async (seen, claimed) => ({ claimed: [...claimed], events: (await seen.selectFrom('events').select('id').where('account_id', '=', accountId).where('type', 'like', 'contract.%').orderBy('id').execute()).map((row) => row.id) }),
      )
      expect(written.claimed).toEqual(new Set([keyed.id]))
      expect(written.answered).toEqual({ claimed: [keyed.id], events: [original.id, keyless.id, keyed.id].sort() })

      const deliveries = await db.selectFrom('webhook_deliveries').select(['event_id', 'endpoint_id', 'status']).where('account_id', '=', accountId).execute()
      const statuses = Object.fromEntries(deliveries.map((row) => [`${row.event_id} ${row.endpoint_id}`, row.status]))
      expect(statuses).toEqual(
        Object.fromEntries([original, keyless, keyed].flatMap((row) => [[`${row.id} ${active}`, 'pending'], [`${row.id} ${disabled}`, 'held']])),
      )
      const types = await db.selectFrom('custom_event_types').select('name').where('account_id', '=', accountId).orderBy('name').execute()
      expect(types.map((row) => row.name)).toEqual(['contract.keyed', 'contract.keyless', 'contract.original'])
    })
  })

  describe('lease', () => {
    const h = herald()
    it('lease: leases the picked deliveries, counts them per endpoint, and counts a lost lease as an attempt', async () => {
      const { herald, clock } = h.current
      const { db, dialect: sqlDialect } = herald.database
      const { accountId, active } = await endpoints(h.current)
      const now = clock.now()
      const { deliveryIds } = await insertBacklog(db, accountId, active, 'pending', 3, now)
      const [lost] = deliveryIds
      // A lease taken a minute ago that ran out: its worker is gone.
      await db.updateTable('webhook_deliveries').set({ lease_token: 'gone', leased_at: now - 60_000, lease_expires_at: now - 1 }).where('id', '=', lost!).execute()

      const leaseToken = randomUUID()
      const leased = await transaction(db, (tx) =>
        claimSqlFor(sqlDialect).lease(tx, {
          picked: tx.db.selectFrom((q) => q.selectFrom('webhook_deliveries').select('id').where('id', 'in', deliveryIds).as('p')).select('id'),
          now,
          leaseToken,
          leaseEnds: now + 30_000,
          holder: 'contract',
        }),
      )

      // Each as it was before the lease, with its event's payload.
      expect(leased.map((row) => ({ id: row.id, lease_token: row.lease_token, data: row.data })).sort((a, b) => a.id.localeCompare(b.id))).toEqual(
        deliveryIds.map((id, n) => ({ id, lease_token: id === lost ? 'gone' : null, data: `{"n":${n}}` })).sort((a, b) => a.id.localeCompare(b.id)),
      )
      const rows = await db.selectFrom('webhook_deliveries').selectAll().where('id', 'in', deliveryIds).execute()
      for (const row of rows) {
        expect(row).toMatchObject({ status: 'pending', lease_token: leaseToken, leased_at: now, lease_expires_at: now + 30_000 })
        expect(row).toMatchObject(row.id === lost ? { attempt_count: 1, last_attempt_at: now - 60_000, last_error: 'worker_lost' } : { attempt_count: 0, last_error: null })
      }
      const counts = await db.selectFrom('webhook_leases').select(['endpoint_id', 'outstanding', 'holder', 'expires_at']).where('lease_token', '=', leaseToken).execute()
      expect(counts).toEqual([{ endpoint_id: active, outstanding: 3, holder: 'contract', expires_at: now + 30_000 }])
    })
  })

  describe('complete', () => {
    const h = herald()
    it('complete: records successes (ending the run of failures) and failures, releases the lease, and discards an outcome whose lease is gone', async () => {
      const { herald, clock } = h.current
      const { db, dialect: sqlDialect } = herald.database
      const { accountId, active } = await endpoints(h.current)
      const now = clock.now()
      const { deliveryIds } = await insertBacklog(db, accountId, active, 'pending', 3, now)
      await db.updateTable('webhook_endpoints').set({ failing_since: now - 1000 }).where('id', '=', active).execute()
      const queue = new DeliveryQueue(db, sqlDialect, clock, herald.settings, herald.webhooks.endpoints, new Outbox(herald.notifications))
      const { deliveries } = await queue.claim(10, 30_000, new Map())
      expect(deliveries.map((delivery) => delivery.id).sort()).toEqual([...deliveryIds].sort())

      // Each attempt's request as the sender reports it: its URL and signature header, recorded with the attempt.
      const request = (delivery: ClaimedDelivery, responseStatus: number) => ({ url: `http://127.0.0.1:9/active?${responseStatus}`, signature: `v1,${delivery.id}` })
      const outcome = (delivery: ClaimedDelivery, responseStatus: number): AttemptOutcome => ({ delivery, request: request(delivery, responseStatus), startedAt: now, durationMs: 5, responseStatus, error: null, responseExcerpt: 'ok', retryAfterSeconds: null })
      const [first, second, third] = deliveries as [ClaimedDelivery, ClaimedDelivery, ClaimedDelivery]
      // All successes first (PostgreSQL records them in one statement), then a failure and a late outcome of a delivery
      // recorded already, whose lease is gone.
      const failingSince = async () => (await db.selectFrom('webhook_endpoints').select('failing_since').where('id', '=', active).executeTakeFirstOrThrow()).failing_since
      expect(await queue.complete([outcome(first, 200), outcome(second, 204)])).toEqual({ finished: [{ status: 'succeeded' }, { status: 'succeeded' }], failed: [], disabled: [], nextRetryAt: null })
      expect(await failingSince()).toBeNull()
      const retried = await queue.complete([outcome(third, 500), outcome(second, 500)])
      expect(retried).toEqual({ finished: [], failed: [], disabled: [], nextRetryAt: expect.any(Number) })
      expect(retried.nextRetryAt).toBeGreaterThan(now)
      expect(await failingSince()).toBe(now)

      const rows = await db.selectFrom('webhook_deliveries').select(['id', 'status', 'attempt_count', 'lease_token', 'last_response_status', 'next_attempt_at', 'finished_at']).where('id', 'in', deliveryIds).execute()
      expect(Object.fromEntries(rows.map(({ id, ...row }) => [id, row]))).toEqual({
        [first.id]: { status: 'succeeded', attempt_count: 1, lease_token: null, last_response_status: 200, next_attempt_at: null, finished_at: now },
        [second.id]: { status: 'succeeded', attempt_count: 1, lease_token: null, last_response_status: 204, next_attempt_at: null, finished_at: now },
        // The report tells the retry's due time as written.
        [third.id]: { status: 'pending', attempt_count: 1, lease_token: null, last_response_status: 500, next_attempt_at: retried.nextRetryAt, finished_at: null },
      })
      const attempts = await db.selectFrom('webhook_attempts').select(['delivery_id', 'number', 'response_status', 'request_url', 'request_signature']).where('delivery_id', 'in', deliveryIds).execute()
      const recorded = (delivery: ClaimedDelivery, responseStatus: number) => {
        const { url, signature } = request(delivery, responseStatus)
        return { delivery_id: delivery.id, number: 1, response_status: responseStatus, request_url: url, request_signature: signature }
      }
      expect(attempts.sort((a, b) => a.delivery_id.localeCompare(b.delivery_id))).toEqual([recorded(first, 200), recorded(second, 204), recorded(third, 500)].sort((a, b) => a.delivery_id.localeCompare(b.delivery_id)))
      // Every delivery of the lease is recorded: its count is gone.
      expect(await db.selectFrom('webhook_leases').select('lease_token').where('endpoint_id', '=', active).execute()).toEqual([])
    })
  })
})
