import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import { DEFAULT_SETTINGS } from '../../src/platform/settings/settings.js'
import { forEachDialect, OPERATOR_TOKEN, useHerald } from '../support/herald.js'
import { call, createAccount } from '../support/http.js'
import { eventually, Receiver } from '../support/receiver.js'
import { type Delivery, LOCAL_DELIVERY, leasedTo, subscribedEndpoint, useReceiver, webhookApi } from './support.js'

const HOUR = 3600

forEachDialect((dialect) => {
  const h = useHerald(dialect, LOCAL_DELIVERY)
  const receiver = useReceiver()

  async function deliveryOf(api: Awaited<ReturnType<typeof webhookApi>>, query: string, predicate: (delivery: Delivery) => boolean = () => true): Promise<Delivery> {
    return eventually(async () => {
      const page = await api.get<{ data: Delivery[] }>(`/webhooks/deliveries?${query}`)
      const found = page.body.data.find(predicate)
      return found && (await api.get<Delivery>(`/webhooks/deliveries/${found.id}`)).body
    }, 10_000, `a delivery matching ${query}`)
  }

  /**
   * An account whose endpoints are disabled after failing for an hour, retried every 30 minutes, and an endpoint
   * of it subscribed to `a.*` that the receiver answers with 500.
   */
  async function failingEndpoint() {
    const account = await createAccount(h.current)
    const api = await webhookApi(account, h.current.clock)
    expect((await api.patch('/settings', { webhook_disable_after: 3600, webhook_retry_schedule: [1800, 1800, 1800] })).status).toBe(200)
    const endpoint = await subscribedEndpoint(api, receiver.current.url, ['a.*'])
    receiver.current.respond = () => ({ status: 500 })
    return { api, endpoint }
  }

  describe('an oauth event, delivered and verified with standardwebhooks', () => {
    it('delivers oauth.client.created to an endpoint subscribed to oauth.client.*', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['oauth.client.*'])
      const { body: secret } = await api.get<{ secret: string }>(`/webhooks/endpoints/${endpoint.id}/secret`)
      expect(secret.secret).toMatch(/^whsec_/)

      const client = await api.post<{ client_id: string }>('/oauth/clients', { client_name: 'billing', grant_types: ['client_credentials'] })
      expect(client.status).toBe(201)

      const request = await eventually(() => receiver.current.requests[0], 10_000, 'the webhook')
      const payload = new Webhook(secret.secret).verify(request.body, request.headers as Record<string, string>) as { type: string; data: { client_id: string; client_secret?: string } }
      expect(payload.type).toBe('oauth.client.created')
      expect(payload.data.client_id).toBe(client.body.client_id)
      expect(payload.data.client_secret).toBeUndefined()
      expect(request.headers['content-type']).toBe('application/json')

      const delivery = await deliveryOf(api, `endpoint_id=${endpoint.id}`, (d) => d.status === 'succeeded')
      expect(delivery).toMatchObject({ event_id: request.headers['webhook-id'], event_type: 'oauth.client.created', attempt_count: 1, last_response_status: 204 })
      expect(delivery.attempts).toHaveLength(1)
      // Only subscribed types arrive: the management token's own issuance is not an event, and nothing else came.
      expect(receiver.current.requests).toHaveLength(1)
    })
  })

  describe("Herald's own events, fanned out by a worker that comes to them later", () => {
    const own = useHerald(dialect, { ...LOCAL_DELIVERY, worker: false })

    it('go to the subscriptions made before each event, not to one made since', async () => {
      const account = await createAccount(own.current)
      const api = await webhookApi(account, own.current.clock)
      // A millisecond between the steps: the order then shows in the ids' times, whatever other ids were made.
      const step = () => own.current.clock.advance(1)
      const before = await subscribedEndpoint(api, receiver.current.url, ['oauth.client.*'])
      step()
      const first = await api.post<{ client_id: string }>('/oauth/clients', { client_name: 'first', grant_types: ['client_credentials'] })
      step()
      const since = await subscribedEndpoint(api, `${receiver.current.url}/since`, ['oauth.client.*'])
      step()
      const second = await api.post<{ client_id: string }>('/oauth/clients', { client_name: 'second', grant_types: ['client_credentials'] })

      expect([first.status, second.status]).toEqual([201, 201])
      // Both events wait in the outbox until now: the worker fans them out after the second subscription exists.
      own.current.herald.webhooks.worker.start()
      await own.current.herald.webhooks.worker.runPass()
      const { body } = await api.get<{ data: Delivery[] }>('/webhooks/deliveries?event_type=oauth.client.created')
      const received = body.data.map((delivery) => [delivery.endpoint_id, delivery.status]).sort()
      expect(received).toEqual([[before.id, 'succeeded'], [before.id, 'succeeded'], [since.id, 'succeeded']].sort())
      const toSince = receiver.current.requests.filter((request) => request.path.endsWith('/since'))
      expect(toSince.map((request) => (JSON.parse(request.body) as { data: { client_id: string } }).data.client_id)).toEqual([second.body.client_id])
    })
  })

  describe('retries on the schedule', () => {
    it('records 500, 500, 200 as three attempts with rising times', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['invoice.paid'])
      const statuses = [500, 500, 200]
      receiver.current.respond = () => ({ status: statuses[Math.min(receiver.current.requests.length - 1, 2)]!, body: 'receiver says hi' })

      const published = await api.post<{ id: string }>('/webhooks/events', { type: 'invoice.paid', data: { amount: 42 } })
      expect(published.status).toBe(201)
      await eventually(() => receiver.current.requests.length === 1, 10_000, 'the first attempt')
      const first = await deliveryOf(api, `event_id=${published.body.id}`, (d) => d.attempt_count === 1 && d.status === 'pending')
      expect(first.last_response_status).toBe(500)
      // The first retry is due about 5 s later (±20%); nothing happens before the clock gets there.
      expect(Date.parse(first.next_attempt_at!) - h.current.clock.now()).toBeGreaterThanOrEqual(4000)
      expect(Date.parse(first.next_attempt_at!) - h.current.clock.now()).toBeLessThanOrEqual(6000)

      h.current.clock.advanceSeconds(7)
      await eventually(() => receiver.current.requests.length === 2, 10_000, 'the second attempt')
      await deliveryOf(api, `event_id=${published.body.id}`, (d) => d.attempt_count === 2)
      h.current.clock.advanceSeconds(6 * 60)
      const done = await deliveryOf(api, `event_id=${published.body.id}`, (d) => d.status === 'succeeded')

      expect(done.endpoint_id).toBe(endpoint.id)
      expect(done.attempts!.map((attempt) => attempt.response_status)).toEqual([500, 500, 200])
      expect(done.attempts!.map((attempt) => attempt.number)).toEqual([1, 2, 3])
      const times = done.attempts!.map((attempt) => Date.parse(attempt.started_at))
      expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(4000)
      expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(240_000)
      expect(done.attempts![0]!.response_excerpt).toBe('receiver says hi')
      // Every attempt is signed afresh, under the same message id.
      expect(new Set(receiver.current.requests.map((r) => r.headers['webhook-id'])).size).toBe(1)
      expect(new Set(receiver.current.requests.map((r) => r.headers['webhook-timestamp'])).size).toBe(3)
    })

    it('fails a delivery after the whole schedule, says so, and a manual retry delivers it', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['invoice.*'])
      const watcher = await Receiver.start()
      await subscribedEndpoint(api, watcher.url, ['webhook.delivery.failed'])
      receiver.current.respond = () => ({ status: 503 })

      const published = await api.post<{ id: string }>('/webhooks/events', { type: 'invoice.voided', data: {} })
      const attempts = 1 + DEFAULT_SETTINGS.webhook_retry_schedule.length
      for (let n = 1; n < attempts; n++) {
        await eventually(() => receiver.current.requests.length === n, 10_000, `attempt ${n}`)
        await deliveryOf(api, `event_id=${published.body.id}`, (d) => d.attempt_count === n)
        h.current.clock.advanceSeconds(13 * HOUR)
      }
      const failed = await deliveryOf(api, `status=failed&endpoint_id=${endpoint.id}`)
      expect(failed.event_id).toBe(published.body.id)
      expect(failed.attempt_count).toBe(attempts)
      expect(failed.next_attempt_at).toBeNull()
      expect(failed.attempts!.every((attempt) => attempt.response_status === 503)).toBe(true)

      const notice = await eventually(() => watcher.requests[0], 10_000, 'webhook.delivery.failed')
      expect(JSON.parse(notice.body)).toMatchObject({ type: 'webhook.delivery.failed', data: { delivery_id: failed.id, event_type: 'invoice.voided', attempt_count: attempts } })
      await watcher.close()

      receiver.current.respond = () => ({ status: 200 })
      const retried = await api.post<Delivery>(`/webhooks/deliveries/${failed.id}/retry`)
      expect(retried.status).toBe(202)
      const succeeded = await deliveryOf(api, `event_id=${published.body.id}`, (d) => d.status === 'succeeded')
      expect(succeeded.attempt_count).toBe(attempts + 1)
      expect(succeeded.attempts!.at(-1)!.response_status).toBe(200)
    })

    it('follows the account schedule, and Retry-After can push a retry later', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      expect((await api.patch('/settings', { webhook_retry_schedule: [60] })).status).toBe(200)
      await subscribedEndpoint(api, receiver.current.url, ['report.*'])
      receiver.current.respond = () => ({ status: 429, headers: { 'retry-after': '600' } })

      const published = await api.post<{ id: string }>('/webhooks/events', { type: 'report.ready', data: {} })
      const first = await deliveryOf(api, `event_id=${published.body.id}`, (d) => d.attempt_count === 1)
      expect(Date.parse(first.next_attempt_at!) - h.current.clock.now()).toBe(600_000)
      h.current.clock.advanceSeconds(601)
      const failed = await deliveryOf(api, `event_id=${published.body.id}`, (d) => d.status === 'failed')
      expect(failed.attempt_count).toBe(2)
    })
  })

  describe('disabled endpoints', () => {
    it('holds deliveries while disabled and delivers them once enabled', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['order.*'])
      const disabled = await api.patch<{ status: string; disabled_reason: string }>(`/webhooks/endpoints/${endpoint.id}`, { status: 'disabled' })
      expect(disabled.body).toMatchObject({ status: 'disabled', disabled_reason: 'manual' })

      const published = await api.post<{ id: string }>('/webhooks/events', { type: 'order.shipped', data: { order: 7 } })
      const held = await deliveryOf(api, `status=held&endpoint_id=${endpoint.id}`)
      expect(held).toMatchObject({ event_id: published.body.id, attempt_count: 0, next_attempt_at: null })
      expect(receiver.current.requests).toHaveLength(0)

      expect((await api.patch(`/webhooks/endpoints/${endpoint.id}`, { status: 'active' })).status).toBe(200)
      const request = await eventually(() => receiver.current.requests[0], 10_000, 'the released delivery')
      expect(request.headers['webhook-id']).toBe(published.body.id)
      await deliveryOf(api, `event_id=${published.body.id}`, (d) => d.status === 'succeeded')
    })

    it('disables an endpoint that answers 410 Gone', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['a.*'])
      receiver.current.respond = () => ({ status: 410 })
      const published = await api.post<{ id: string }>('/webhooks/events', { type: 'a.b', data: {} })
      const delivery = await deliveryOf(api, `event_id=${published.body.id}`, (d) => d.attempt_count === 1)
      expect(delivery.status).toBe('held')
      const after = await api.get<{ status: string; disabled_reason: string }>(`/webhooks/endpoints/${endpoint.id}`)
      expect(after.body).toMatchObject({ status: 'disabled', disabled_reason: 'gone' })
    })

    it('disables an endpoint that fails for longer than webhook_disable_after', async () => {
      const { api, endpoint } = await failingEndpoint()
      const published = await api.post<{ id: string }>('/webhooks/events', { type: 'a.b', data: {} })
      for (let n = 1; n <= 3; n++) {
        await deliveryOf(api, `event_id=${published.body.id}`, (d) => d.attempt_count === n)
        h.current.clock.advanceSeconds(2400)
      }
      const after = await eventually(async () => {
        const response = await api.get<{ status: string; disabled_reason: string }>(`/webhooks/endpoints/${endpoint.id}`)
        return response.body.status === 'disabled' && response.body
      }, 10_000, 'the endpoint to be disabled')
      expect(after.disabled_reason).toBe('failing')
      expect((await deliveryOf(api, `event_id=${published.body.id}`)).status).toBe('held')
    })
  })

  describe('a success between failures', () => {
    it('ends the run of failures, so the endpoint is not disabled for the failures before it', async () => {
      const { api, endpoint } = await failingEndpoint()
      const failing = await api.post<{ id: string }>('/webhooks/events', { type: 'a.failing', data: {} })
      await deliveryOf(api, `event_id=${failing.body.id}`, (d) => d.attempt_count === 1)
      h.current.clock.advanceSeconds(2400)
      await deliveryOf(api, `event_id=${failing.body.id}`, (d) => d.attempt_count === 2)
      receiver.current.respond = () => ({ status: 204 })
      const fine = await api.post<{ id: string }>('/webhooks/events', { type: 'a.fine', data: {} })
      await deliveryOf(api, `event_id=${fine.body.id}`, (d) => d.status === 'succeeded')
      receiver.current.respond = () => ({ status: 500 })
      // 4,800 s after the first failure, but only the first failure since the success.
      h.current.clock.advanceSeconds(2400)
      await deliveryOf(api, `event_id=${failing.body.id}`, (d) => d.attempt_count === 3)
      const after = await api.get<{ status: string }>(`/webhooks/endpoints/${endpoint.id}`)
      expect(after.body.status).toBe('active')
    })
  })

  describe('deleting an endpoint', () => {
    it('cancels its undelivered deliveries, which stay listed', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['a.*'])
      await api.patch(`/webhooks/endpoints/${endpoint.id}`, { status: 'disabled' })
      const published = await api.post<{ id: string }>('/webhooks/events', { type: 'a.b', data: {} })
      await deliveryOf(api, `event_id=${published.body.id}`, (d) => d.status === 'held')
      expect((await api.delete(`/webhooks/endpoints/${endpoint.id}`)).status).toBe(204)
      const cancelled = await deliveryOf(api, `status=cancelled&endpoint_id=${endpoint.id}`)
      expect(cancelled.event_id).toBe(published.body.id)
      expect((await api.post(`/webhooks/deliveries/${cancelled.id}/retry`)).status).toBe(409)
      expect((await api.get(`/webhooks/endpoints/${endpoint.id}`)).status).toBe(404)
    })
  })

  describe('fairness', () => {
    it("doesn't let a slow endpoint delay a fast one", async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      // The slow endpoint answers nothing until the fast one has had all its deliveries.
      let answerSlow = () => {}
      const slowAnswers = new Promise<void>((resolve) => (answerSlow = resolve))
      const slow = await Receiver.start(() => ({ status: 200, until: slowAnswers }))
      try {
        await subscribedEndpoint(api, slow.url, ['slow.*'], { max_in_flight: 5 })
        await subscribedEndpoint(api, receiver.current.url, ['fast.*'])
        for (let n = 0; n < 30; n++) {
          expect((await api.post('/webhooks/events', { type: 'slow.tick', data: { n } })).status).toBe(201)
          expect((await api.post('/webhooks/events', { type: 'fast.tick', data: { n } })).status).toBe(201)
        }
        // All 30 fast deliveries arrive while the first slow ones are still waiting for their answers.
        await eventually(() => receiver.current.requests.length === 30, 4000, 'every fast delivery')
        expect(slow.requests.length).toBeLessThanOrEqual(5)
      } finally {
        answerSlow()
        await slow.close()
      }
    })
  })

  describe('in-flight caps', () => {
    it('never has more attempts open at an endpoint than its max_in_flight, and releases its leases', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const capped = await Receiver.start(() => ({ status: 200, delayMs: 30 }))
      try {
        const endpoint = await subscribedEndpoint(api, capped.url, ['capped.*'], { max_in_flight: 3 })
        for (let n = 0; n < 40; n++) expect((await api.post('/webhooks/events', { type: 'capped.tick', data: { n } })).status).toBe(201)
        await eventually(() => capped.requests.length === 40, 10_000, 'every delivery')
        expect(capped.maxConcurrent).toBeLessThanOrEqual(3)
        expect(capped.maxConcurrent).toBeGreaterThan(1)
        // Once every attempt is recorded, no lease counts a delivery as in flight any more.
        await eventually(async () => (await leasedTo(h.current.herald.database.db, endpoint.id, h.current.clock.now())) === 0, 10_000, 'the leases released')
      } finally {
        await capped.close()
      }
    })

    describe('in a worker of HERALD_WEBHOOK_CONCURRENCY=2', () => {
      const narrow = useHerald(dialect, { env: { ...LOCAL_DELIVERY.env, HERALD_WEBHOOK_CONCURRENCY: '2' } })

      it('has no more attempts open at once than that, over all endpoints', async () => {
        const account = await createAccount(narrow.current)
        const api = await webhookApi(account, narrow.current.clock)
        // One receiver behind two endpoints, each allowed more than the worker: only the worker's window limits.
        const shared = await Receiver.start(() => ({ status: 200, delayMs: 30 }))
        try {
          await subscribedEndpoint(api, `${shared.url}/one`, ['wide.*'], { max_in_flight: 10 })
          await subscribedEndpoint(api, `${shared.url}/two`, ['wide.*'], { max_in_flight: 10 })
          for (let n = 0; n < 20; n++) expect((await api.post('/webhooks/events', { type: 'wide.tick', data: { n } })).status).toBe(201)
          await eventually(() => shared.requests.length === 40, 10_000, 'every delivery')
          expect(shared.maxConcurrent).toBe(2)
        } finally {
          await shared.close()
        }
      })
    })
  })

  describe('a lost lease', () => {
    it('counts the lost attempt from when it started, and attempts the delivery again', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['lease.*'])
      // No attempt is answered while the test looks: the first stands for one whose worker died mid-way.
      receiver.current.respond = () => ({ status: 204, delayMs: 10_000 })
      const published = await api.post<{ id: string }>('/webhooks/events', { type: 'lease.taken', data: {} })
      const attempts = () => receiver.current.requests.filter((request) => request.headers['webhook-id'] === published.body.id).length
      await eventually(() => attempts() === 1, 10_000, 'the first attempt')
      const leasedAt = h.current.clock.now()
      // In flight, the delivery is next attempted when its lease ends, if that attempt never reports back.
      const inFlight = await deliveryOf(api, `event_id=${published.body.id}`)
      expect(inFlight).toMatchObject({ status: 'pending', attempt_count: 0 })
      expect(Date.parse(inFlight.next_attempt_at!)).toBeGreaterThan(leasedAt)

      h.current.clock.advanceSeconds(HOUR)
      await eventually(() => attempts() === 2, 10_000, 'the attempt after the lease ran out')
      const delivery = await deliveryOf(api, `event_id=${published.body.id}`)
      expect(delivery).toMatchObject({ status: 'pending', attempt_count: 1, last_error: 'worker_lost', last_response_status: null })
      expect(Date.parse(delivery.last_attempt_at!)).toBe(leasedAt)
      expect(delivery.attempts).toEqual([expect.objectContaining({ number: 1, error: 'worker_lost', response_status: null, started_at: delivery.last_attempt_at })])
      // The lost lease counts for nothing and its row is pruned; the new lease counts the attempt in flight.
      const { database, pruners } = h.current.herald
      expect(await leasedTo(database.db, endpoint.id, h.current.clock.now())).toBe(1)
      expect(await pruners.leases.runOnce()).toBe(1)
      expect(await database.db.selectFrom('webhook_leases').select('outstanding').where('endpoint_id', '=', endpoint.id).execute()).toEqual([{ outstanding: 1 }])
    })
  })

  describe('rate limits', () => {
    it('claims no more deliveries per second than the endpoint allows', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      await subscribedEndpoint(api, receiver.current.url, ['metered.*'], { rate_limit: 2 })
      for (let n = 0; n < 5; n++) expect((await api.post('/webhooks/events', { type: 'metered.tick', data: { n } })).status).toBe(201)
      await eventually(() => receiver.current.requests.length === 2, 10_000, 'the first second')
      // The test clock stands still, so the current second's budget stays spent: a whole pass sends nothing more.
      await h.current.herald.webhooks.worker.runPass()
      expect(receiver.current.requests).toHaveLength(2)
      h.current.clock.advanceSeconds(1)
      await eventually(() => receiver.current.requests.length === 4, 10_000, 'the second second')
      h.current.clock.advanceSeconds(1)
      await eventually(() => receiver.current.requests.length === 5, 10_000, 'the third second')
    })
  })

  describe('retention of events on a database of its own', () => {
    const own = useHerald(dialect, { ...LOCAL_DELIVERY, worker: false })

    it('reads at most a batch of events per run, going on from where the last run stopped', async () => {
      const account = await createAccount(own.current)
      const api = await webhookApi(account, own.current.clock)
      expect((await api.patch('/settings', { webhook_retention_days: 2 })).status).toBe(200)
      const db = own.current.herald.database.db
      const old = own.current.clock.now() - 3 * 24 * HOUR * 1000
      const event = (n: number) => ({ id: `evt_retention_${String(n).padStart(5, '0')}`, account_id: account.id, type: 'a.b', data: '{}', created_at: old + n, fanned_out_at: old + n, idempotency_key: null })
      // 1,500 events past retention whose deliveries wait, held, and after them one that never had a delivery.
      const waiting = Array.from({ length: 1500 }, (_, n) => event(n))
      for (let start = 0; start < waiting.length; start += 250) {
        const chunk = waiting.slice(start, start + 250)
        await db.insertInto('events').values(chunk).execute()
        await db
          .insertInto('webhook_deliveries')
          .values(chunk.map((e) => ({ id: `dlv_${e.id}`, account_id: account.id, event_id: e.id, event_type: 'a.b', endpoint_id: 'ep_gone', status: 'held' as const, attempt_count: 0, next_attempt_at: null, lease_token: null, leased_at: null, lease_expires_at: null, last_attempt_at: null, last_response_status: null, last_error: null, finished_at: null, created_at: e.created_at })))
          .execute()
      }
      const unreferenced = event(1500)
      await db.insertInto('events').values(unreferenced).execute()
      const exists = async () => (await db.selectFrom('events').select('id').where('id', '=', unreferenced.id).execute()).length === 1

      // A batch is 1,000 events: the first run reads past 1,000 waiting ones, the second the rest and then deletes.
      expect(await own.current.herald.pruners.events.runOnce()).toBe(1000)
      expect(await exists()).toBe(true)
      expect(await own.current.herald.pruners.events.runOnce()).toBe(501)
      expect(await exists()).toBe(false)
      // Having read to the end, the next run starts again from the oldest.
      expect(await own.current.herald.pruners.events.runOnce()).toBe(1000)
      expect(await db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', account.id).where('id', 'like', 'evt_retention_%').executeTakeFirstOrThrow()).toEqual({ n: 1500 })
    })
  })

  describe('retention', () => {
    it('prunes finished deliveries, their attempts and events after the retention period, never pending ones', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      expect((await api.patch('/settings', { webhook_retention_days: 2 })).status).toBe(200)
      // Another account keeps its deliveries for the default 30 days.
      const other = await webhookApi(await createAccount(h.current), h.current.clock)
      await subscribedEndpoint(other, receiver.current.url, ['pruned.*'])
      const otherDone = await other.post<{ id: string }>('/webhooks/events', { type: 'pruned.x', data: {} })
      await deliveryOf(other, `event_id=${otherDone.body.id}`, (d) => d.status === 'succeeded')
      const kept = await Receiver.start(() => ({ status: 500 }))
      try {
        await subscribedEndpoint(api, receiver.current.url, ['kept.*', 'pruned.*'])
        const failing = await subscribedEndpoint(api, kept.url, ['kept.*'])
        const done = await api.post<{ id: string }>('/webhooks/events', { type: 'pruned.x', data: {} })
        const waiting = await api.post<{ id: string }>('/webhooks/events', { type: 'kept.x', data: {} })
        await deliveryOf(api, `event_id=${done.body.id}`, (d) => d.status === 'succeeded')
        await deliveryOf(api, `event_id=${waiting.body.id}&endpoint_id=${failing.id}`, (d) => d.attempt_count === 1)

        h.current.clock.advanceSeconds(2 * 24 * HOUR - 60)
        const { pruners } = h.current.herald
        expect(await pruners.deliveries.runOnce()).toBe(0)
        h.current.clock.advanceSeconds(120)
        // The succeeded deliveries of both events go; the one still retrying stays, and so does its event.
        expect(await pruners.deliveries.runOnce()).toBe(2)
        expect(await pruners.events.runOnce()).toBeGreaterThanOrEqual(1)
        expect((await api.get(`/webhooks/events/${done.body.id}`)).status).toBe(404)
        expect((await api.get(`/webhooks/events/${waiting.body.id}`)).status).toBe(200)
        const remaining = await api.get<{ data: Delivery[] }>(`/webhooks/deliveries?event_id=${waiting.body.id}`)
        expect(remaining.body.data.map((d) => d.endpoint_id)).toEqual([failing.id])
        const attempts = await h.current.herald.database.db.selectFrom('webhook_attempts').select('delivery_id').where('account_id', '=', account.id).execute()
        expect(new Set(attempts.map((a) => a.delivery_id))).toEqual(new Set([remaining.body.data[0]!.id]))
        expect((await other.get<{ data: Delivery[] }>(`/webhooks/deliveries?event_id=${otherDone.body.id}`)).body.data.map((d) => d.status)).toEqual(['succeeded'])
        expect((await other.get(`/webhooks/events/${otherDone.body.id}`)).status).toBe(200)
      } finally {
        await kept.close()
      }
    })
  })

  describe('a disabled account', () => {
    it('keeps its deliveries waiting until the operator enables it again', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      await subscribedEndpoint(api, receiver.current.url, ['a.*'])
      receiver.current.respond = () => ({ status: receiver.current.requests.length === 1 ? 500 : 200 })
      const published = await api.post<{ id: string }>('/webhooks/events', { type: 'a.b', data: {} })
      await deliveryOf(api, `event_id=${published.body.id}`, (d) => d.attempt_count === 1)

      const setStatus = (status: string) => call(`${h.current.origin}/accounts/${account.id}`, 'PATCH', { token: OPERATOR_TOKEN, json: { status } })
      expect((await setStatus('disabled')).status).toBe(200)
      h.current.clock.advanceSeconds(60)
      // The retry is due, but a whole pass leaves it alone.
      await h.current.herald.webhooks.worker.runPass()
      expect(receiver.current.requests).toHaveLength(1)

      expect((await setStatus('active')).status).toBe(200)
      h.current.clock.advanceSeconds(1)
      await eventually(() => receiver.current.requests.length === 2, 10_000, 'the retry after enabling')
      await deliveryOf(api, `event_id=${published.body.id}`, (d) => d.status === 'succeeded')
    })
  })
})
