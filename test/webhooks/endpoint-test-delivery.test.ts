import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import { forEachDialect, useHerald } from '../support/herald.js'
import { call, createAccount, managementToken } from '../support/http.js'
import { type Delivery, type Endpoint, LOCAL_DELIVERY, subscribedEndpoint, useReceiver, type WebhookApi, webhookApi } from './support.js'

// POST /webhooks/endpoints/{id}/test (Svix's "send example"): one webhook.test delivery to that endpoint alone, through
// the ordinary queue. The worker is driven pass by pass, so "nobody else got it" is read after the work is done.

interface Page<T> {
  data: T[]
}

interface TestEventPayload {
  type: string
  timestamp: string
  data: { endpoint_id: string; message: string; sent_at: string }
}

forEachDialect((dialect) => {
  const h = useHerald(dialect, { ...LOCAL_DELIVERY, worker: false })
  const receiver = useReceiver()

  /** Runs the worker's passes until the delivery is no longer pending, and answers it with its attempts. */
  async function deliver(api: WebhookApi, deliveryId: string): Promise<Delivery> {
    const { worker } = h.current.herald.webhooks
    worker.start()
    for (let pass = 0; pass < 5; pass++) {
      await worker.runPass()
      const delivery = (await api.get<Delivery>(`/webhooks/deliveries/${deliveryId}`)).body
      if (delivery.status !== 'pending') return delivery
    }
    throw new Error(`delivery ${deliveryId} still pending after 5 passes of the worker`)
  }

  async function endpointAt(api: WebhookApi, url: string): Promise<Endpoint> {
    const created = await api.post<Endpoint>('/webhooks/endpoints', { url, description: 'under test' })
    expect(created.status).toBe(201)
    return created.body
  }

  describe('a test delivery', () => {
    it('reaches that endpoint alone, signed, with the event id as webhook-id, and is listed succeeded with its attempt', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      // Subscribed to nothing: a test goes to the endpoint whatever it subscribes to.
      const tested = await endpointAt(api, receiver.current.url)
      const bystander = await subscribedEndpoint(api, `${receiver.current.url}/bystander`, ['*'])

      const sent = await api.post<Delivery>(`/webhooks/endpoints/${tested.id}/test`)
      expect(sent.status).toBe(202)
      expect(sent.body).toMatchObject({ endpoint_id: tested.id, event_type: 'webhook.test', status: 'pending', attempt_count: 0, last_response_status: null })
      expect(sent.body.id).toMatch(/^dlv_/)
      expect(sent.body.event_id).toMatch(/^evt_/)

      const done = await deliver(api, sent.body.id)
      expect(done).toMatchObject({ status: 'succeeded', attempt_count: 1, last_response_status: 204, event_id: sent.body.event_id })
      expect(done.attempts!.map((attempt) => [attempt.number, attempt.response_status])).toEqual([[1, 204]])

      // The worker's pass also drained the outbox: an event left to fan-out would have reached the bystander by now.
      expect((await api.get<Page<Delivery>>(`/webhooks/deliveries?endpoint_id=${bystander.id}`)).body.data).toEqual([])
      const listed = (await api.get<Page<Delivery>>('/webhooks/deliveries')).body.data
      expect(listed.map((delivery) => [delivery.id, delivery.endpoint_id, delivery.status, delivery.attempt_count])).toEqual([[sent.body.id, tested.id, 'succeeded', 1]])

      expect(receiver.current.requests.map((request) => request.path)).toEqual(['/hooks'])
      const [request] = receiver.current.requests
      expect(request!.headers['webhook-id']).toBe(sent.body.event_id)
      const { body: secret } = await api.get<{ secret: string }>(`/webhooks/endpoints/${tested.id}/secret`)
      const payload = new Webhook(secret.secret).verify(request!.body, request!.headers as Record<string, string>) as TestEventPayload
      expect(payload.type).toBe('webhook.test')
      expect(payload.data.endpoint_id).toBe(tested.id)
      const event = await api.get<{ type: string; data: unknown; created_at: string }>(`/webhooks/events/${sent.body.event_id}`)
      expect(event.body).toMatchObject({ type: 'webhook.test', data: payload.data })
      expect(payload.data.sent_at).toBe(event.body.created_at)
    })

    it('is held while the endpoint is disabled, and goes out once it is enabled', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const tested = await endpointAt(api, receiver.current.url)
      expect((await api.patch(`/webhooks/endpoints/${tested.id}`, { status: 'disabled' })).status).toBe(200)

      const sent = await api.post<Delivery>(`/webhooks/endpoints/${tested.id}/test`)
      expect(sent.status).toBe(202)
      expect(sent.body).toMatchObject({ endpoint_id: tested.id, status: 'held', next_attempt_at: null })

      expect((await api.patch(`/webhooks/endpoints/${tested.id}`, { status: 'active' })).status).toBe(200)
      expect(await deliver(api, sent.body.id)).toMatchObject({ status: 'succeeded', attempt_count: 1 })
      expect(receiver.current.messageIds).toEqual([sent.body.event_id])
    })

    it("is refused for a client's logout endpoint, which carries logout tokens only", async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const client = await api.post<{ client_id: string }>('/oauth/clients', {
        redirect_uris: ['https://rp.example/cb'],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        scope: 'openid',
        backchannel_logout_uri: `${receiver.current.url}/logout`,
      })
      expect(client.status, JSON.stringify(client.body)).toBe(201)
      const endpoints = (await api.get<Page<Endpoint & { client_id: string | null }>>('/webhooks/endpoints')).body.data
      const logout = endpoints.find((endpoint) => endpoint.client_id === client.body.client_id)!

      const refused = await api.post<{ code: string }>(`/webhooks/endpoints/${logout.id}/test`)
      expect(refused.status).toBe(409)
      expect(refused.body.code).toBe('conflict')
      expect((await api.get<Page<Delivery>>('/webhooks/deliveries')).body.data).toEqual([])
      expect((await api.get<Page<unknown>>('/webhooks/events?type=webhook.test')).body.data).toEqual([])
    })
  })

  describe('who may send one', () => {
    it("answers 404 for another account's endpoint, or an id that names none, and writes nothing", async () => {
      const owner = await createAccount(h.current, 'owner')
      const other = await createAccount(h.current, 'other')
      const ownerApi = await webhookApi(owner, h.current.clock)
      const otherApi = await webhookApi(other, h.current.clock)
      const tested = await endpointAt(ownerApi, receiver.current.url)

      for (const id of [tested.id, 'ep_00000000000000000000000000', 'not-an-id']) {
        const refused = await otherApi.post<{ code: string }>(`/webhooks/endpoints/${id}/test`)
        expect(refused.status, id).toBe(404)
        expect(refused.body.code, id).toBe('not_found')
      }
      for (const api of [ownerApi, otherApi]) {
        expect((await api.get<Page<Delivery>>('/webhooks/deliveries')).body.data).toEqual([])
        expect((await api.get<Page<unknown>>('/webhooks/events?type=webhook.test')).body.data).toEqual([])
      }
    })

    it('needs herald:webhooks:write: a read or publish token gets 403 insufficient_scope', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const tested = await endpointAt(api, receiver.current.url)
      for (const scope of ['herald:webhooks:read', 'herald:events:publish']) {
        const token = await managementToken(account, scope)
        const refused = await call<{ code: string }>(`${account.base}/webhooks/endpoints/${tested.id}/test`, 'POST', { token })
        expect(refused.status, scope).toBe(403)
        expect(refused.body.code, scope).toBe('insufficient_scope')
      }
      expect((await api.get<Page<Delivery>>('/webhooks/deliveries')).body.data).toEqual([])
    })
  })

  it("lists webhook.test among Herald's own event types, with an example", async () => {
    const account = await createAccount(h.current)
    const api = await webhookApi(account, h.current.clock)
    const types = (await api.get<Page<{ name: string; description: string; example: Record<string, unknown>; custom: boolean }>>('/webhooks/event-types')).body.data
    const test = types.find((type) => type.name === 'webhook.test')
    expect(test).toMatchObject({ custom: false, example: { endpoint_id: expect.stringMatching(/^ep_/), sent_at: expect.any(String) } })
    expect(test!.description).toContain('/webhooks/endpoints/{id}/test')
  })
})
