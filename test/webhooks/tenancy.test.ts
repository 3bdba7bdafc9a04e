import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from '../../src/platform/pagination.js'
import { type CreatedAccount, forEachDialect, useHerald } from '../support/herald.js'
import { type ApiResponse, call, createAccount, managementToken } from '../support/http.js'
import { eventually, Receiver } from '../support/receiver.js'
import { type Delivery, type Endpoint, LOCAL_DELIVERY, subscribedEndpoint, type WebhookApi, webhookApi } from './support.js'

/**
 * One account can't see, change or receive another's webhook resources. Account B holds a management token with
 * every scope, yet A's endpoints, subscriptions, events, deliveries and recovery jobs are as absent under B's base
 * as ids that never existed (404, never 403), B's lists never show them, and A's events never reach B's endpoints.
 */

interface Problem {
  code: string
}

function expectNotFound(response: ApiResponse<Problem>, what: string): void {
  const where = `${what}: ${response.status} ${response.text.slice(0, 300)}`
  expect(response.status, where).toBe(404)
  expect(response.headers.get('content-type'), where).toMatch(/^application\/problem\+json(;|$)/)
  expect(response.body.code, where).toBe('not_found')
}

forEachDialect((dialect) => {
  const h = useHerald(dialect, LOCAL_DELIVERY)
  let a: CreatedAccount
  let b: CreatedAccount
  let apiA: WebhookApi
  let tokenB: string
  let receiverA: Receiver
  let receiverB: Receiver
  let endpointA: Endpoint
  let endpointB: Endpoint
  let secretA: string
  let subscriptionA: string
  let eventA: string
  let deliveryA: Delivery
  let jobA: string

  /** B's own management API, with every management scope, called with A's ids under B's base. */
  const asB = <T = Problem>(method: string, path: string, json?: unknown) => call<T>(`${b.base}${path}`, method, { token: tokenB, ...(json !== undefined && { json }) })

  beforeAll(async () => {
    receiverA = await Receiver.start()
    receiverB = await Receiver.start()
    a = await createAccount(h.current, 'tenant-a')
    b = await createAccount(h.current, 'tenant-b')
    apiA = await webhookApi(a, h.current.clock)
    tokenB = await managementToken(b)
    const apiB = await webhookApi(b, h.current.clock)

    endpointA = await subscribedEndpoint(apiA, receiverA.url, ['*'], { description: 'A only', metadata: { owner: 'a' } })
    endpointB = await subscribedEndpoint(apiB, receiverB.url, ['*'])
    secretA = (await apiA.get<{ secret: string }>(`/webhooks/endpoints/${endpointA.id}/secret`)).body.secret
    const subscriptions = await apiA.get<Page<{ id: string }>>(`/webhooks/subscriptions?endpoint_id=${endpointA.id}`)
    subscriptionA = subscriptions.body.data[0]!.id

    const published = await apiA.post<{ id: string }>('/webhooks/events', { type: 'invoice.paid', data: { tenant: 'a' } })
    expect(published.status).toBe(201)
    eventA = published.body.id
    deliveryA = await eventually(async () => {
      const page = await apiA.get<Page<Delivery>>(`/webhooks/deliveries?event_id=${eventA}`)
      return page.body.data.find((delivery) => delivery.status === 'succeeded')
    }, 10_000, "A's delivery")

    const job = await apiA.post<{ id: string }>(`/webhooks/endpoints/${endpointA.id}/recover`, { since: new Date(h.current.clock.now() - 3600_000).toISOString() })
    expect(job.status).toBe(202)
    jobA = job.body.id
  })

  afterAll(async () => {
    await receiverA?.close()
    await receiverB?.close()
  })

  describe("A's resources are not found under B's base", () => {
    it("answers 404 for every operation on A's endpoint", async () => {
      const path = `/webhooks/endpoints/${endpointA.id}`
      expectNotFound(await asB('GET', path), 'GET endpoint')
      expectNotFound(await asB('PATCH', path, { url: receiverB.url, description: 'stolen', status: 'disabled' }), 'PATCH endpoint')
      expectNotFound(await asB('GET', `${path}/secret`), 'GET secret')
      expectNotFound(await asB('POST', `${path}/secret/rotate`, {}), 'rotate secret')
      expectNotFound(await asB('POST', `${path}/secret/rotate`, { secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`, overlap_seconds: 0 }), 'rotate to a chosen secret')
      expectNotFound(await asB('POST', `${path}/recover`, { since: new Date(0).toISOString() }), 'recover')
      expectNotFound(await asB('DELETE', path), 'DELETE endpoint')
    })

    it("answers 404 for A's subscription, and for subscribing B to A's endpoint", async () => {
      expectNotFound(await asB('GET', `/webhooks/subscriptions/${subscriptionA}`), 'GET subscription')
      expectNotFound(await asB('DELETE', `/webhooks/subscriptions/${subscriptionA}`), 'DELETE subscription')
      expectNotFound(await asB('POST', '/webhooks/subscriptions', { endpoint_id: endpointA.id, event_types: ['*'] }), 'subscribe to A endpoint')
    })

    it("answers 404 for A's event, delivery and recovery job", async () => {
      expectNotFound(await asB('GET', `/webhooks/events/${eventA}`), 'GET event')
      expectNotFound(await asB('GET', `/webhooks/deliveries/${deliveryA.id}`), 'GET delivery')
      expectNotFound(await asB('POST', `/webhooks/deliveries/${deliveryA.id}/retry`), 'retry delivery')
      expectNotFound(await asB('GET', `/webhooks/jobs/${jobA}`), 'GET job')
    })

    it("refuses B's token at A's base: it was issued by another issuer", async () => {
      const response = await call<Problem>(`${a.base}/webhooks/endpoints/${endpointA.id}`, 'GET', { token: tokenB })
      expect(response.status).toBe(401)
      expect(response.body.code).toBe('invalid_token')
    })

    it('left A’s resources exactly as they were', async () => {
      const endpoint = await apiA.get<Endpoint & { description: string; metadata: Record<string, string> }>(`/webhooks/endpoints/${endpointA.id}`)
      expect(endpoint.status).toBe(200)
      expect(endpoint.body).toMatchObject({ url: receiverA.url, status: 'active', disabled_reason: null, description: 'A only', metadata: { owner: 'a' } })
      expect((await apiA.get<{ secret: string }>(`/webhooks/endpoints/${endpointA.id}/secret`)).body.secret).toBe(secretA)
      const subscription = await apiA.get<{ endpoint_id: string; event_types: string[] }>(`/webhooks/subscriptions/${subscriptionA}`)
      expect(subscription.status).toBe(200)
      expect(subscription.body).toMatchObject({ endpoint_id: endpointA.id, event_types: ['*'] })
      // B's retry did not queue A's delivery again, and B's recover made no job in A.
      const delivery = await apiA.get<Delivery>(`/webhooks/deliveries/${deliveryA.id}`)
      expect(delivery.body).toMatchObject({ status: 'succeeded', attempt_count: 1 })
      // Only A's own endpoint is subscribed in A: B's subscribe attempt created nothing anywhere.
      const subscriptions = await apiA.get<Page<{ endpoint_id: string }>>('/webhooks/subscriptions?limit=200')
      expect(subscriptions.body.data.map((item) => item.endpoint_id)).toEqual([endpointA.id])
      const subscriptionsOfB = await asB<Page<{ endpoint_id: string }>>('GET', '/webhooks/subscriptions?limit=200')
      expect(subscriptionsOfB.body.data.map((item) => item.endpoint_id)).toEqual([endpointB.id])
    })
  })

  describe("B's lists never include A's items", () => {
    it('lists only B’s endpoints, subscriptions, events and deliveries', async () => {
      const endpoints = await asB<Page<{ id: string }>>('GET', '/webhooks/endpoints?limit=200')
      expect(endpoints.body.data.map((item) => item.id)).toEqual([endpointB.id])
      const subscriptions = await asB<Page<{ id: string }>>('GET', '/webhooks/subscriptions?limit=200')
      expect(subscriptions.body.data.map((item) => item.id)).not.toContain(subscriptionA)
      const events = await asB<Page<{ id: string; data: unknown }>>('GET', '/webhooks/events?limit=200')
      expect(events.body.data.map((item) => item.id)).not.toContain(eventA)
      expect(events.body.data.length).toBeGreaterThan(0)
      const deliveries = await asB<Page<Delivery>>('GET', '/webhooks/deliveries?limit=200')
      expect(deliveries.body.data.map((item) => item.id)).not.toContain(deliveryA.id)
      expect(deliveries.body.data.every((item) => item.endpoint_id === endpointB.id)).toBe(true)
    })

    it("answers empty lists when B filters by A's ids", async () => {
      for (const path of [
        `/webhooks/subscriptions?endpoint_id=${endpointA.id}`,
        `/webhooks/deliveries?endpoint_id=${endpointA.id}`,
        `/webhooks/deliveries?event_id=${eventA}`,
        `/webhooks/deliveries?endpoint_id=${endpointA.id}&status=succeeded`,
        '/webhooks/events?type=invoice.paid',
        '/webhooks/deliveries?event_type=invoice.paid',
      ]) {
        const page = await asB<Page<unknown>>('GET', path)
        expect(page.status, path).toBe(200)
        expect(page.body, path).toEqual({ data: [], next_cursor: null })
      }
    })

    it("does not list A's custom event types at B", async () => {
      const types = await asB<{ data: Array<{ name: string }> }>('GET', '/webhooks/event-types')
      expect(types.status).toBe(200)
      expect(types.body.data.map((type) => type.name)).not.toContain('invoice.paid')
    })
  })

  describe("A's events never reach B's endpoints", () => {
    it("delivers A's published and oauth events to A only, though B subscribes to *", async () => {
      const published = await apiA.post<{ id: string }>('/webhooks/events', { type: 'order.created', data: { tenant: 'a' } })
      expect(published.status).toBe(201)
      const client = await apiA.post<{ client_id: string }>('/oauth/clients', { client_name: 'a-billing', grant_types: ['client_credentials'] })
      expect(client.status).toBe(201)
      const clientEvent = await eventually(async () => {
        const page = await apiA.get<Page<{ id: string; data: { client_id?: string } }>>('/webhooks/events?type=oauth.client.created')
        return page.body.data.find((event) => event.data.client_id === client.body.client_id)
      }, 10_000, 'the oauth.client.created event in A')

      const idsOfA = [eventA, published.body.id, clientEvent.id]
      await eventually(() => idsOfA.every((id) => receiverA.messageIds.includes(id)), 10_000, "A's receiver to get A's events")
      // Every delivery A's events made went to A's endpoint, and every one has finished.
      for (const id of idsOfA) {
        const deliveries = await eventually(async () => {
          const page = await apiA.get<Page<Delivery>>(`/webhooks/deliveries?event_id=${id}`)
          return page.body.data.every((delivery) => delivery.status === 'succeeded') && page.body.data
        }, 10_000, `the deliveries of ${id} to finish`)
        expect(deliveries.map((delivery) => delivery.endpoint_id)).toEqual([endpointA.id])
      }
      // Nothing for B is waiting either: whatever B has is its own, and done.
      const ofB = await eventually(async () => {
        const page = await asB<Page<Delivery>>('GET', '/webhooks/deliveries?limit=200')
        return page.body.data.every((delivery) => delivery.status === 'succeeded') && page.body.data
      }, 10_000, "B's deliveries to finish")
      const eventsOfB = new Set((await asB<Page<{ id: string }>>('GET', '/webhooks/events?limit=200')).body.data.map((event) => event.id))
      expect(ofB.every((delivery) => eventsOfB.has(delivery.event_id))).toBe(true)
      for (const id of idsOfA) {
        expect(eventsOfB.has(id)).toBe(false)
        expect(receiverB.messageIds).not.toContain(id)
      }
      expect(receiverB.messageIds.every((id) => eventsOfB.has(id))).toBe(true)
      expect(receiverB.requests.map((request) => request.body).join('\n')).not.toContain('"tenant":"a"')
      expect(receiverB.requests.map((request) => request.body).join('\n')).not.toContain(client.body.client_id)
    })
  })
})
