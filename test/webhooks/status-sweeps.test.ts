import { beforeEach, describe, expect, it } from 'vitest'
import { DEFAULT_WORKER_OPTIONS } from '../../src/webhooks/delivery/delivery-worker.js'
import { forEachDialect, startHerald, useHerald } from '../support/herald.js'
import { createAccount } from '../support/http.js'
import { eventually } from '../support/receiver.js'
import { deliveryStatuses, insertBacklog, LOCAL_DELIVERY, subscribedEndpoint, useReceiver, webhookApi } from './support.js'

/** What an endpoint's status change does at once, and then each worker round. */
const BATCH = DEFAULT_WORKER_OPTIONS.batch

forEachDialect((dialect) => {
  // No worker: each test runs the sweeps' batches itself, and looks between them.
  const h = useHerald(dialect, { ...LOCAL_DELIVERY, worker: false })
  const receiver = useReceiver()

  async function endpointWithBacklog(status: 'held' | 'pending', count: number) {
    const account = await createAccount(h.current)
    const api = await webhookApi(account, h.current.clock)
    const endpoint = await subscribedEndpoint(api, receiver.current.url, ['a.*'])
    if (status === 'held') expect((await api.patch(`/webhooks/endpoints/${endpoint.id}`, { status: 'disabled' })).status).toBe(200)
    const { eventIds, deliveryIds } = await insertBacklog(h.current.herald.database.db, account.id, endpoint.id, status, count, h.current.clock.now())
    return { api, endpoint, eventIds, deliveryIds }
  }

  const statuses = (endpointId: string) => deliveryStatuses(h.current.herald.database.db, endpointId)

  async function sweepsOf(endpointId: string): Promise<string[]> {
    const rows = await h.current.herald.database.db.selectFrom('webhook_sweeps').select('kind').where('endpoint_id', '=', endpointId).orderBy('id').execute()
    return rows.map((row) => row.kind)
  }

  const runSweepBatch = () => h.current.herald.webhooks.sweeps.runBatch()

  // A worker takes the oldest sweep of any endpoint: one a failed test left behind would go first.
  beforeEach(async () => {
    await h.current.herald.database.db.deleteFrom('webhook_sweeps').execute()
  })

  describe('an endpoint with a backlog larger than a batch', () => {
    it('releases one batch when enabled, and another process releases and delivers the rest, each event once', async () => {
      const { api, endpoint, eventIds } = await endpointWithBacklog('held', 2 * BATCH + 100)
      expect((await api.patch(`/webhooks/endpoints/${endpoint.id}`, { status: 'active' })).status).toBe(200)
      expect(await statuses(endpoint.id)).toEqual({ pending: BATCH, held: BATCH + 100 })
      expect(await sweepsOf(endpoint.id)).toEqual(['release'])

      // A second process, as `herald worker` would be: it carries on the recorded sweep and sends everything.
      const worker = await startHerald(dialect, { ...LOCAL_DELIVERY, shareWith: h.current })
      try {
        await eventually(() => new Set(receiver.current.requests.map((request) => request.headers['webhook-id'])).size === eventIds.length, 20_000, 'every released event')
        await eventually(async () => (await statuses(endpoint.id)).succeeded === eventIds.length, 10_000, 'every delivery succeeded')
      } finally {
        await worker.close()
      }
      const received = receiver.current.requests.map((request) => request.headers['webhook-id'])
      expect(received.sort()).toEqual([...eventIds].sort())
      expect(await sweepsOf(endpoint.id)).toEqual([])
    })

    it('holds one batch when disabled and the rest in later batches, leaving a delivery in flight to complete', async () => {
      const { api, endpoint, deliveryIds } = await endpointWithBacklog('pending', 2 * BATCH + 100)
      const db = h.current.herald.database.db
      // Beyond the first batch: a worker's batch, not the request's, has to leave it alone.
      const inFlight = deliveryIds[BATCH + 50]!
      await db.updateTable('webhook_deliveries').set({ lease_token: 'lease-in-flight', leased_at: h.current.clock.now(), lease_expires_at: h.current.clock.now() + 60_000 }).where('id', '=', inFlight).execute()

      expect((await api.patch(`/webhooks/endpoints/${endpoint.id}`, { status: 'disabled' })).status).toBe(200)
      expect(await statuses(endpoint.id)).toEqual({ held: BATCH, pending: BATCH + 100 })
      expect(await sweepsOf(endpoint.id)).toEqual(['hold'])
      expect(await runSweepBatch()).toBe(true)
      expect(await statuses(endpoint.id)).toEqual({ held: 2 * BATCH, pending: 100 })
      expect(await runSweepBatch()).toBe(true)
      expect(await statuses(endpoint.id)).toEqual({ held: 2 * BATCH + 99, pending: 1 })
      expect(await sweepsOf(endpoint.id)).toEqual([])
      expect(await runSweepBatch()).toBe(false)
      const leased = await db.selectFrom('webhook_deliveries').select(['status', 'lease_token']).where('id', '=', inFlight).executeTakeFirstOrThrow()
      expect(leased).toEqual({ status: 'pending', lease_token: 'lease-in-flight' })
    })

    it('lets a retry release a held delivery that the enable has not reached yet', async () => {
      const { api, endpoint, deliveryIds } = await endpointWithBacklog('held', BATCH + 100)
      expect((await api.patch(`/webhooks/endpoints/${endpoint.id}`, { status: 'active' })).status).toBe(200)
      const last = deliveryIds.at(-1)!
      expect((await api.get<{ status: string }>(`/webhooks/deliveries/${last}`)).body.status).toBe('held')
      const retried = await api.post<{ status: string; next_attempt_at: string | null }>(`/webhooks/deliveries/${last}/retry`)
      expect(retried.status).toBe(202)
      expect(retried.body.status).toBe('pending')
      expect(retried.body.next_attempt_at).not.toBeNull()
      while (await runSweepBatch());
      expect(await statuses(endpoint.id)).toEqual({ pending: BATCH + 100 })
    })

    it('holds the whole backlog when a worker disables the endpoint for answering 410', async () => {
      const { api, endpoint } = await endpointWithBacklog('pending', 2 * BATCH + 100)
      receiver.current.respond = () => ({ status: 410 })
      const worker = await startHerald(dialect, { ...LOCAL_DELIVERY, shareWith: h.current })
      try {
        // The sweep's record goes with its last batch, or with an empty one after it.
        await eventually(async () => (await sweepsOf(endpoint.id)).length === 0 && (await statuses(endpoint.id)).held === 2 * BATCH + 100, 20_000, 'every delivery held')
      } finally {
        await worker.close()
      }
      const after = await api.get<{ status: string; disabled_reason: string }>(`/webhooks/endpoints/${endpoint.id}`)
      expect(after.body).toMatchObject({ status: 'disabled', disabled_reason: 'gone' })
      // Only what was in flight when the first 410 came was sent.
      expect(receiver.current.requests.length).toBeLessThan(BATCH)
    })

    it('ends a release when the endpoint is disabled again before it is done, and starts it anew when enabled', async () => {
      const { api, endpoint } = await endpointWithBacklog('held', 2 * BATCH + 100)
      expect((await api.patch(`/webhooks/endpoints/${endpoint.id}`, { status: 'active' })).status).toBe(200)
      expect((await api.patch(`/webhooks/endpoints/${endpoint.id}`, { status: 'disabled' })).status).toBe(200)
      // Disabling held the released batch again, a full batch: its sweep looks for more. The release's record
      // remains until a worker looks at it, and then ends, with nothing released.
      expect(await statuses(endpoint.id)).toEqual({ held: 2 * BATCH + 100 })
      expect(await sweepsOf(endpoint.id)).toEqual(['release', 'hold'])
      expect(await runSweepBatch()).toBe(true)
      expect(await sweepsOf(endpoint.id)).toEqual(['hold'])
      expect(await runSweepBatch()).toBe(true)
      expect(await statuses(endpoint.id)).toEqual({ held: 2 * BATCH + 100 })
      expect(await sweepsOf(endpoint.id)).toEqual([])

      expect((await api.patch(`/webhooks/endpoints/${endpoint.id}`, { status: 'active' })).status).toBe(200)
      while (await runSweepBatch());
      expect(await statuses(endpoint.id)).toEqual({ pending: 2 * BATCH + 100 })
    })

    it('cancels one batch of each status when deleted, and the rest in a later batch', async () => {
      const { api, endpoint } = await endpointWithBacklog('held', BATCH + 200)
      const db = h.current.herald.database.db
      // Half of them pending again, as if released and not yet sent.
      const pending = (await db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', endpoint.id).orderBy('id').limit(BATCH + 100).execute()).map((row) => row.id)
      await db.updateTable('webhook_deliveries').set({ status: 'pending', next_attempt_at: h.current.clock.now() }).where('id', 'in', pending).execute()
      expect(await statuses(endpoint.id)).toEqual({ pending: BATCH + 100, held: 100 })

      expect((await api.delete(`/webhooks/endpoints/${endpoint.id}`)).status).toBe(204)
      expect(await statuses(endpoint.id)).toEqual({ cancelled: BATCH + 100, pending: 100 })
      expect(await sweepsOf(endpoint.id)).toEqual(['cancel'])
      expect(await runSweepBatch()).toBe(true)
      expect(await statuses(endpoint.id)).toEqual({ cancelled: BATCH + 200 })
      expect(await sweepsOf(endpoint.id)).toEqual([])
      expect(await runSweepBatch()).toBe(false)
    })
  })
})
