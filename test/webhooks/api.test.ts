import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import type { Page } from '../../src/platform/pagination.js'
import { forEachDialect, startHerald, type TestHerald, useHerald } from '../support/herald.js'
import { call, createAccount, managementToken } from '../support/http.js'
import { eventually, type ReceivedRequest } from '../support/receiver.js'
import { type Delivery, type Endpoint, insertBacklog, LOCAL_DELIVERY, subscribedEndpoint, type WebhookApi, useReceiver, webhookApi } from './support.js'

/**
 * The webhook management API's behaviour beyond delivery itself: idempotent publishing, secret rotation, recovery
 * jobs, the event-type catalogue, listing and paging events and deliveries, subscription patterns, metrics and the
 * management scopes. Real HTTP, real receivers, both dialects.
 */

interface EventView {
  id: string
  type: string
  data: Record<string, unknown>
  idempotency_key: string | null
  created_at: string
}

/** A delivery as `GET /webhooks/deliveries/{id}` shows it: the body its attempts sent, and each attempt's request. */
interface DeliveryDetail extends Delivery {
  body: string | null
  attempts: Array<NonNullable<Delivery['attempts']>[number] & { request: SentRequest | null }>
}

interface SentRequest {
  url: string | null
  headers: { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string | null } | null
}

/** The Standard Webhooks headers that attempt `index` of `delivery` was sent with, signature included. */
function signedHeaders(delivery: DeliveryDetail, index: number): Record<string, string> {
  const headers = delivery.attempts[index]?.request?.headers
  const signature = headers?.['webhook-signature']
  if (!headers || !signature) throw new Error(`attempt ${index + 1} shows no signature: ${JSON.stringify(delivery.attempts[index])}`)
  return { ...headers, 'webhook-signature': signature }
}

interface Job {
  id: string
  kind: string
  endpoint_id: string
  since: string
  status: string
  requeued: number
  finished_at: string | null
}

/** Every item of a list, page by page, checking each cursor moves strictly on. */
async function everyPage<T extends { id: string }>(api: WebhookApi, path: string, limit: number): Promise<{ items: T[]; pages: number }> {
  const items: T[] = []
  let cursor: string | null = null
  let pages = 0
  do {
    const separator = path.includes('?') ? '&' : '?'
    const page: { status: number; body: Page<T> } = await api.get<Page<T>>(`${path}${separator}limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`)
    expect(page.status).toBe(200)
    expect(page.body.data.length).toBeLessThanOrEqual(limit)
    items.push(...page.body.data)
    cursor = page.body.next_cursor
    pages++
    if (pages > 100) throw new Error('paging never ended')
  } while (cursor !== null)
  return { items, pages }
}

const ids = (items: Array<{ id: string }>) => items.map((item) => item.id)

/** The deliveries of `query` once none is pending any more. */
async function settled(api: WebhookApi, query: string, count: number): Promise<Delivery[]> {
  return eventually(async () => {
    const page = await api.get<Page<Delivery>>(`/webhooks/deliveries?limit=200&${query}`)
    return page.body.data.length === count && page.body.data.every((delivery) => delivery.status !== 'pending') && page.body.data
  }, 10_000, `${count} finished deliveries for ${query}`)
}

forEachDialect((dialect) => {
  const h = useHerald(dialect, LOCAL_DELIVERY)
  const receiver = useReceiver()

  describe('publishing with an idempotency key', () => {
    it('answers a replay with the original event, refuses another body, and forgets the key after 24 h', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['order.*'])

      const first = await api.post<EventView>('/webhooks/events', { type: 'order.placed', data: { total: 10, lines: { a: 1, b: 2 } }, idempotency_key: 'order-7' })
      expect(first.status).toBe(201)
      expect(first.body.idempotency_key).toBe('order-7')
      // The same meaning, spelt with keys in another order at every level.
      const replay = await api.post<EventView>('/webhooks/events', { idempotency_key: 'order-7', data: { lines: { b: 2, a: 1 }, total: 10 }, type: 'order.placed' })
      expect(replay.status).toBe(200)
      expect(replay.body).toEqual(first.body)

      const changedData = await api.post<{ code: string }>('/webhooks/events', { type: 'order.placed', data: { total: 11, lines: { a: 1, b: 2 } }, idempotency_key: 'order-7' })
      expect(changedData.status).toBe(409)
      expect(changedData.body.code).toBe('conflict')
      const changedType = await api.post<{ code: string }>('/webhooks/events', { type: 'order.shipped', data: { total: 10, lines: { a: 1, b: 2 } }, idempotency_key: 'order-7' })
      expect(changedType.status).toBe(409)
      expect(changedType.body.code).toBe('conflict')

      await eventually(() => receiver.current.messageIds.includes(first.body.id), 10_000, 'the delivery of the first publish')
      const deliveries = await settled(api, `endpoint_id=${endpoint.id}`, 1)
      expect(deliveries[0]!.event_id).toBe(first.body.id)
      expect(receiver.current.messageIds).toEqual([first.body.id])
      const events = await api.get<Page<EventView>>('/webhooks/events?type=order.placed')
      expect(ids(events.body.data)).toEqual([first.body.id])

      // Another account's identical key is its own.
      const other = await webhookApi(await createAccount(h.current, 'other'), h.current.clock)
      const elsewhere = await other.post<EventView>('/webhooks/events', { type: 'order.placed', data: { total: 10, lines: { a: 1, b: 2 } }, idempotency_key: 'order-7' })
      expect(elsewhere.status).toBe(201)
      expect(elsewhere.body.id).not.toBe(first.body.id)

      // Still within the window one second before it ends.
      h.current.clock.advanceSeconds(24 * 3600 - 1)
      expect((await api.post<EventView>('/webhooks/events', { type: 'order.placed', data: { total: 10, lines: { a: 1, b: 2 } }, idempotency_key: 'order-7' })).status).toBe(200)
      h.current.clock.advanceSeconds(2)
      // Expired, the key's row is pruned.
      expect(await h.current.herald.pruners.idempotencyKeys.runOnce()).toBeGreaterThanOrEqual(2)
      const db = h.current.herald.database.db
      expect(await db.selectFrom('event_idempotency_keys').select('key').where('account_id', '=', account.id).execute()).toEqual([])
      const later = await api.post<EventView>('/webhooks/events', { type: 'order.placed', data: { total: 10, lines: { a: 1, b: 2 } }, idempotency_key: 'order-7' })
      expect(later.status).toBe(201)
      expect(later.body.id).not.toBe(first.body.id)
      // The key now belongs to the new event: another body conflicts with it.
      expect((await api.post('/webhooks/events', { type: 'order.placed', data: {}, idempotency_key: 'order-7' })).status).toBe(409)
      await settled(api, `endpoint_id=${endpoint.id}`, 2)
      await eventually(() => receiver.current.messageIds.includes(later.body.id), 10_000, 'the delivery of the new event')
      expect(receiver.current.messageIds).toEqual([first.body.id, later.body.id])
    })

    it('answers concurrent publishes, committed together, as if they had come one at a time', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['batch.*'])
      const fresh = { type: 'batch.keyed', data: { n: 1 }, idempotency_key: 'fresh-key' }
      const used = { type: 'batch.keyed', data: { n: 2 }, idempotency_key: 'used-key' }
      const earlier = await api.post<EventView>('/webhooks/events', used)
      expect(earlier.status).toBe(201)
      // Sent at once, so that they share transactions: a key first claimed in the burst, replays and conflicts
      // of a key claimed before it, and plain publishes.
      const answers = await Promise.all([
        ...Array.from({ length: 10 }, () => api.post<EventView>('/webhooks/events', fresh)),
        ...Array.from({ length: 5 }, () => api.post<EventView>('/webhooks/events', used)),
        ...Array.from({ length: 5 }, () => api.post<{ code: string }>('/webhooks/events', { ...used, data: { n: 3 } })),
        ...Array.from({ length: 30 }, (_, index) => api.post<EventView>('/webhooks/events', { type: 'batch.plain', data: { index } })),
      ])
      const freshAnswers = answers.slice(0, 10) as Array<{ status: number; body: EventView }>
      const replays = answers.slice(10, 15) as Array<{ status: number; body: EventView }>
      const conflicts = answers.slice(15, 20) as Array<{ status: number; body: { code: string } }>
      const plain = answers.slice(20) as Array<{ status: number; body: EventView }>

      const created = freshAnswers.filter((answer) => answer.status === 201)
      expect(created).toHaveLength(1)
      const original = created[0]!
      for (const replay of freshAnswers.filter((answer) => answer !== original)) {
        expect(replay.status).toBe(200)
        expect(replay.body).toEqual(original.body)
      }
      for (const replay of replays) {
        expect(replay.status).toBe(200)
        expect(replay.body).toEqual(earlier.body)
      }
      for (const conflict of conflicts) {
        expect(conflict.status).toBe(409)
        expect(conflict.body.code).toBe('conflict')
      }
      expect(plain.map((answer) => answer.status)).toEqual(plain.map(() => 201))
      expect(new Set(plain.map((answer) => answer.body.id)).size).toBe(30)
      expect(plain.map((answer) => answer.body.data)).toEqual(plain.map((_, index) => ({ index })))

      // One event and one delivery per publish that created one, and nothing else.
      const keyedEvents = await api.get<Page<EventView>>('/webhooks/events?type=batch.keyed')
      expect(ids(keyedEvents.body.data).sort()).toEqual([original.body.id, earlier.body.id].sort())
      const plainEvents = await api.get<Page<EventView>>('/webhooks/events?type=batch.plain&limit=100')
      expect(ids(plainEvents.body.data).sort()).toEqual(plain.map((answer) => answer.body.id).sort())
      const deliveries = await settled(api, `endpoint_id=${endpoint.id}`, 32)
      expect(new Set(deliveries.map((delivery) => delivery.event_id))).toEqual(new Set([original.body.id, earlier.body.id, ...plain.map((answer) => answer.body.id)]))
    })

    it('lets one of many publishes racing for a key create its event, in whichever batch it lands', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['race.*'])
      // More than a batch holds (200), two bodies for one key, and plain publishes between them: the key is claimed
      // by batches written side by side (PostgreSQL writes two at once), or again by a batch after the winner's.
      const answers = await Promise.all(
        Array.from({ length: 300 }, (_, index) =>
          index % 3 === 2
            ? api.post<EventView>('/webhooks/events', { type: 'race.plain', data: { index } })
            : api.post<EventView | { code: string }>('/webhooks/events', { type: 'race.keyed', data: { side: index % 3 }, idempotency_key: 'race' }),
        ),
      )
      const keyed = answers.filter((_, index) => index % 3 !== 2)
      const plain = answers.filter((_, index) => index % 3 === 2) as Array<{ status: number; body: EventView }>
      const created = keyed.filter((answer) => answer.status === 201) as Array<{ status: number; body: EventView }>
      expect(created).toHaveLength(1)
      const original = created[0]!.body
      // Whichever body won, the others with it replay the original, and the other body conflicts with it.
      const sameBody = (index: number) => index % 3 === original.data.side
      expect(keyed.map((answer) => answer.status)).toEqual(answers.flatMap((answer, index) => (index % 3 === 2 ? [] : [answer === created[0] ? 201 : sameBody(index) ? 200 : 409])))
      for (const [index, answer] of answers.entries()) if (index % 3 !== 2 && sameBody(index)) expect(answer.body).toEqual(original)
      expect(plain.map((answer) => answer.status)).toEqual(plain.map(() => 201))

      // One event and one delivery per publish that created one.
      const keyedEvents = await api.get<Page<EventView>>('/webhooks/events?type=race.keyed')
      expect(ids(keyedEvents.body.data)).toEqual([original.id])
      const deliveries = await settled(api, `endpoint_id=${endpoint.id}`, 101)
      expect(deliveries.map((delivery) => delivery.event_id).sort()).toEqual([original.id, ...plain.map((answer) => answer.body.id)].sort())
    })
  })

  describe('publishing deeply nested data', () => {
    it('accepts data nested as deep as bodies may go, and keeps it as sent', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      // The body is one level, data the other 127 of MAX_JSON_DEPTH (128).
      let data: Record<string, unknown> = { leaf: '🦜 ok' }
      for (let level = 1; level < 127; level++) data = { a: data }
      const published = await api.post<EventView & { data: unknown }>('/webhooks/events', { type: 'deep.nested', data, idempotency_key: 'deep-1' })
      expect(published.status).toBe(201)
      expect((await api.get<{ data: unknown }>(`/webhooks/events/${published.body.id}`)).body.data).toEqual(data)
      expect((await api.post('/webhooks/events', { type: 'deep.nested', data, idempotency_key: 'deep-1' })).status).toBe(200)
    })
  })

  describe('secret rotation', () => {
    // A fresh Herald whose clock stays at real time: standardwebhooks checks webhook-timestamp against the wall clock.
    const fresh = useHerald(dialect, LOCAL_DELIVERY)

    const signatures = (request: ReceivedRequest) => String(request.headers['webhook-signature']).split(' ')
    const verify = (secret: string, request: ReceivedRequest) => new Webhook(secret).verify(request.body, request.headers as Record<string, string>)

    async function publishAndReceive(api: WebhookApi, tag: string): Promise<ReceivedRequest> {
      const published = await api.post<EventView>('/webhooks/events', { type: 'rotation.test', data: { tag } })
      expect(published.status).toBe(201)
      return eventually(() => receiver.current.requests.find((request) => request.headers['webhook-id'] === published.body.id), 10_000, `the delivery of ${tag}`)
    }

    it('signs with both secrets during the overlap, with one without it, and takes a secret of your own', async () => {
      const account = await createAccount(fresh.current)
      const api = await webhookApi(account, fresh.current.clock)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['rotation.*'])
      const original = (await api.get<{ secret: string }>(`/webhooks/endpoints/${endpoint.id}/secret`)).body.secret

      const before = await publishAndReceive(api, 'before')
      expect(signatures(before)).toHaveLength(1)
      expect(verify(original, before)).toMatchObject({ type: 'rotation.test', data: { tag: 'before' } })

      const rotated = await api.post<{ secret: string; previous_secret_expires_at: string | null }>(`/webhooks/endpoints/${endpoint.id}/secret/rotate`, {})
      expect(rotated.status).toBe(200)
      expect(rotated.body.secret).toMatch(/^whsec_/)
      expect(rotated.body.secret).not.toBe(original)
      expect(Date.parse(rotated.body.previous_secret_expires_at!)).toBe(fresh.current.clock.now() + 24 * 3600 * 1000)
      expect((await api.get<{ secret: string }>(`/webhooks/endpoints/${endpoint.id}/secret`)).body.secret).toBe(rotated.body.secret)

      const during = await publishAndReceive(api, 'during')
      expect(signatures(during)).toHaveLength(2)
      expect(signatures(during).every((signature) => signature.startsWith('v1,'))).toBe(true)
      expect(verify(rotated.body.secret, during)).toMatchObject({ data: { tag: 'during' } })
      expect(verify(original, during)).toMatchObject({ data: { tag: 'during' } })

      const abrupt = await api.post<{ secret: string; previous_secret_expires_at: string | null }>(`/webhooks/endpoints/${endpoint.id}/secret/rotate`, { overlap_seconds: 0 })
      expect(abrupt.status).toBe(200)
      expect(abrupt.body.previous_secret_expires_at).toBeNull()
      const after = await publishAndReceive(api, 'after')
      expect(signatures(after)).toHaveLength(1)
      expect(verify(abrupt.body.secret, after)).toMatchObject({ data: { tag: 'after' } })
      expect(() => verify(rotated.body.secret, after)).toThrow()
      expect(() => verify(original, after)).toThrow()

      const mine = `whsec_${Buffer.alloc(32, 42).toString('base64')}`
      const chosen = await api.post<{ secret: string; previous_secret_expires_at: string | null }>(`/webhooks/endpoints/${endpoint.id}/secret/rotate`, { secret: mine, overlap_seconds: 60 })
      expect(chosen.status).toBe(200)
      expect(chosen.body.secret).toBe(mine)
      expect((await api.get<{ secret: string }>(`/webhooks/endpoints/${endpoint.id}/secret`)).body.secret).toBe(mine)
      const own = await publishAndReceive(api, 'own')
      expect(signatures(own)).toHaveLength(2)
      expect(verify(mine, own)).toMatchObject({ data: { tag: 'own' } })
      expect(verify(abrupt.body.secret, own)).toMatchObject({ data: { tag: 'own' } })
      expect(() => verify(original, own)).toThrow()
    })

    it('keeps a rotated secret when the endpoint is changed at the same moment', async () => {
      const account = await createAccount(fresh.current)
      const api = await webhookApi(account, fresh.current.clock)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['never.sent'])
      // On PostgreSQL a change used to write back the whole row it had read, undoing a rotation committed meanwhile:
      // the rotation answered a secret that never signed anything.
      for (let n = 0; n < 30; n++) {
        const [changed, rotated] = await Promise.all([
          api.patch(`/webhooks/endpoints/${endpoint.id}`, { description: `round ${n}` }),
          api.post<{ secret: string }>(`/webhooks/endpoints/${endpoint.id}/secret/rotate`, { overlap_seconds: 0 }),
        ])
        expect(changed.status).toBe(200)
        expect(rotated.status).toBe(200)
        expect((await api.get<{ secret: string }>(`/webhooks/endpoints/${endpoint.id}/secret`)).body.secret, `round ${n}`).toBe(rotated.body.secret)
        expect((await api.get<{ description: string }>(`/webhooks/endpoints/${endpoint.id}`)).body.description).toBe(`round ${n}`)
      }
    })

    it("shows each attempt's request as sent, which verifies with the secret of its time after a rotation too", async () => {
      const account = await createAccount(fresh.current)
      const api = await webhookApi(account, fresh.current.clock)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['rotation.*'])
      const original = (await api.get<{ secret: string }>(`/webhooks/endpoints/${endpoint.id}/secret`)).body.secret
      const first = await publishAndReceive(api, 'shown')
      const eventId = String(first.headers['webhook-id'])
      const [delivery] = await settled(api, `event_id=${eventId}`, 1)
      const read = async () => (await api.get<DeliveryDetail>(`/webhooks/deliveries/${delivery!.id}`)).body
      const sent = (request: ReceivedRequest) => ({
        url: new URL(request.path, receiver.current.url).href,
        headers: { 'webhook-id': eventId, 'webhook-timestamp': request.headers['webhook-timestamp'], 'webhook-signature': request.headers['webhook-signature'] },
      })

      const before = await read()
      expect(before.body).toBe(first.body)
      expect(before.attempts.map((attempt) => attempt.request)).toEqual([sent(first)])
      const shown = signedHeaders(before, 0)
      expect(new Webhook(original).verify(before.body!, shown)).toMatchObject({ type: 'rotation.test', data: { tag: 'shown' } })

      const rotated = await api.post<{ secret: string }>(`/webhooks/endpoints/${endpoint.id}/secret/rotate`, { overlap_seconds: 0 })
      expect(rotated.status).toBe(200)
      expect((await api.post(`/webhooks/deliveries/${delivery!.id}/retry`)).status).toBe(202)
      const second = await eventually(() => receiver.current.requests[1], 10_000, 'the retried attempt')
      const after = await eventually(async () => {
        const detail = await read()
        return detail.attempts.length === 2 && detail
      }, 10_000, 'the retried attempt recorded')
      // The first attempt keeps the signature it was sent with, which a recomputation with today's secret would not give.
      expect(after.body).toBe(first.body)
      expect(after.attempts.map((attempt) => attempt.request)).toEqual([sent(first), sent(second)])
      expect(() => new Webhook(rotated.body.secret).verify(after.body!, shown)).toThrow()
      const retried = signedHeaders(after, 1)
      expect(new Webhook(rotated.body.secret).verify(after.body!, retried)).toMatchObject({ data: { tag: 'shown' } })
      expect(() => new Webhook(original).verify(after.body!, retried)).toThrow()
    })

    it('takes a secret of your own when the endpoint is created', async () => {
      const account = await createAccount(fresh.current)
      const api = await webhookApi(account, fresh.current.clock)
      const mine = `whsec_${Buffer.alloc(24, 5).toString('base64')}`
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['rotation.*'], { secret: mine })
      expect((await api.get<{ secret: string }>(`/webhooks/endpoints/${endpoint.id}/secret`)).body.secret).toBe(mine)
      const request = await publishAndReceive(api, 'created')
      expect(verify(mine, request)).toMatchObject({ data: { tag: 'created' } })
    })
  })

  describe('recovering an endpoint', () => {
    it('queues again the failed deliveries created since a time, as a job that reports how many', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      expect((await api.patch('/settings', { webhook_retry_schedule: [1] })).status).toBe(200)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['recover.*'])
      receiver.current.respond = () => ({ status: 500 })

      /** Publishes and lets each delivery use up its two attempts. */
      async function publishFailing(count: number): Promise<string[]> {
        const published: string[] = []
        for (let n = 0; n < count; n++) published.push((await api.post<EventView>('/webhooks/events', { type: 'recover.me', data: { n } })).body.id)
        await eventually(async () => {
          const page = await api.get<Page<Delivery>>(`/webhooks/deliveries?endpoint_id=${endpoint.id}&limit=200`)
          return published.every((id) => page.body.data.some((delivery) => delivery.event_id === id && delivery.attempt_count === 1))
        }, 10_000, 'the first attempts')
        h.current.clock.advanceSeconds(2)
        return published
      }

      const [early] = await publishFailing(1)
      await settled(api, `event_id=${early}&status=failed`, 1)
      h.current.clock.advanceSeconds(60)
      const since = h.current.clock.now()
      const recent = await publishFailing(2)
      for (const id of recent) await settled(api, `event_id=${id}&status=failed`, 1)
      expect((await api.get<Page<Delivery>>(`/webhooks/deliveries?endpoint_id=${endpoint.id}&status=failed`)).body.data).toHaveLength(3)

      receiver.current.respond = () => ({ status: 204 })
      const job = await api.post<Job>(`/webhooks/endpoints/${endpoint.id}/recover`, { since: new Date(since).toISOString() })
      expect(job.status).toBe(202)
      expect(job.body).toMatchObject({ kind: 'recover', endpoint_id: endpoint.id, since: new Date(since).toISOString() })
      const done = await eventually(async () => {
        const read = await api.get<Job>(`/webhooks/jobs/${job.body.id}`)
        return read.body.status === 'done' && read.body
      }, 10_000, 'the job to finish')
      expect(done.requeued).toBe(2)
      expect(done.finished_at).not.toBeNull()

      for (const id of recent) {
        const [delivery] = await eventually(async () => {
          const page = await api.get<Page<Delivery>>(`/webhooks/deliveries?event_id=${id}`)
          return page.body.data[0]?.status === 'succeeded' && page.body.data
        }, 10_000, `the recovered delivery of ${id}`)
        expect(delivery!.attempt_count).toBe(3)
      }
      // Created before `since`: still failed, never sent again.
      const [old] = (await api.get<Page<Delivery>>(`/webhooks/deliveries?event_id=${early}`)).body.data
      expect(old!.status).toBe('failed')
      expect(old!.attempt_count).toBe(2)
      expect(receiver.current.messageIds.filter((id) => id === early)).toHaveLength(2)

      // A second job from before the first event takes what is still failed, and only that.
      const again = await api.post<Job>(`/webhooks/endpoints/${endpoint.id}/recover`, { since: new Date(since - 3600_000).toISOString() })
      const second = await eventually(async () => {
        const read = await api.get<Job>(`/webhooks/jobs/${again.body.id}`)
        return read.body.status === 'done' && read.body
      }, 10_000, 'the second job')
      expect(second.requeued).toBe(1)
      await settled(api, `endpoint_id=${endpoint.id}&status=succeeded`, 3)
    })
  })

  describe('a recovery job, batch by batch', () => {
    const idle = useHerald(dialect, { ...LOCAL_DELIVERY, worker: false })

    it('carries on from where its last batch stopped, and queues only the failed deliveries', async () => {
      const account = await createAccount(idle.current)
      const api = await webhookApi(account, idle.current.clock)
      const endpoint = await subscribedEndpoint(api, 'http://127.0.0.1:9/unreachable', ['a.*'])
      const since = idle.current.clock.now()
      for (let n = 0; n < 7; n++) expect((await api.post('/webhooks/events', { type: 'a.b', data: { n } })).status).toBe(201)
      const db = idle.current.herald.database.db
      const ids = (await db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', endpoint.id).orderBy('id').execute()).map((row) => row.id)
      expect(ids).toHaveLength(7)
      const succeeded = [ids[1]!, ids[4]!]
      const finish = (status: 'succeeded' | 'failed', which: string[]) =>
        db.updateTable('webhook_deliveries').set({ status, next_attempt_at: null, attempt_count: 1, finished_at: since }).where('id', 'in', which).execute()
      await finish('failed', ids)
      await finish('succeeded', succeeded)

      const job = await api.post<Job>(`/webhooks/endpoints/${endpoint.id}/recover`, { since: new Date(since).toISOString() })
      const progress = async () => {
        expect(await idle.current.herald.webhooks.jobs.runBatch(2)).toBe(true)
        const { status, requeued } = (await api.get<Job>(`/webhooks/jobs/${job.body.id}`)).body
        return [status, requeued]
      }
      expect(await progress()).toEqual(['pending', 2])
      expect(await progress()).toEqual(['pending', 4])
      expect(await progress()).toEqual(['done', 5])
      expect(await idle.current.herald.webhooks.jobs.runBatch(2)).toBe(false)
      const statuses = await db.selectFrom('webhook_deliveries').select(['id', 'status']).where('id', 'in', ids).orderBy('id').execute()
      expect(statuses.map((row) => row.status)).toEqual(ids.map((id) => (succeeded.includes(id) ? 'succeeded' : 'pending')))
    })
  })

  describe('retrying by hand while the endpoint is disabled', () => {
    it('holds the delivery until the endpoint is enabled, then delivers it', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      expect((await api.patch('/settings', { webhook_retry_schedule: [1] })).status).toBe(200)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['held.*'])
      receiver.current.respond = () => ({ status: 503 })
      const published = await api.post<EventView>('/webhooks/events', { type: 'held.retry', data: {} })
      await eventually(async () => (await api.get<Page<Delivery>>(`/webhooks/deliveries?event_id=${published.body.id}`)).body.data[0]?.attempt_count === 1, 10_000, 'the first attempt')
      h.current.clock.advanceSeconds(2)
      const [failed] = await settled(api, `event_id=${published.body.id}&status=failed`, 1)
      expect((await api.patch(`/webhooks/endpoints/${endpoint.id}`, { status: 'disabled' })).status).toBe(200)

      const retried = await api.post<Delivery>(`/webhooks/deliveries/${failed!.id}/retry`)
      expect(retried.status).toBe(202)
      // Like every delivery of a disabled endpoint, it waits as held: not pending and due, which no worker would claim.
      expect(retried.body).toMatchObject({ status: 'held', next_attempt_at: null })
      expect((await api.get<Delivery>(`/webhooks/deliveries/${failed!.id}`)).body).toMatchObject({ status: 'held', attempt_count: 2 })
      expect(receiver.current.requests).toHaveLength(2)

      receiver.current.respond = () => ({ status: 204 })
      expect((await api.patch(`/webhooks/endpoints/${endpoint.id}`, { status: 'active' })).status).toBe(200)
      const [delivered] = await settled(api, `event_id=${published.body.id}&status=succeeded`, 1)
      expect(delivered!.attempt_count).toBe(3)
      expect(receiver.current.requests).toHaveLength(3)
    })
  })

  describe("a delivery's attempts recorded without their request", () => {
    it('shows what can be derived, and the URL and signature as unknown; nothing for a lost worker', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const endpoint = await subscribedEndpoint(api, 'http://127.0.0.1:9/old', ['never.sent'])
      const { db } = h.current.herald.database
      const startedAt = Date.parse('2024-05-06T07:08:09.999Z')
      const { eventIds, deliveryIds } = await insertBacklog(db, account.id, endpoint.id, 'held', 1, startedAt)
      // As recorded before the request was kept, and as a claim records a lost worker's attempt.
      await db
        .insertInto('webhook_attempts')
        .values([
          { delivery_id: deliveryIds[0]!, number: 1, account_id: account.id, started_at: startedAt, duration_ms: 12, response_status: 500, error: null, response_excerpt: null },
          { delivery_id: deliveryIds[0]!, number: 2, account_id: account.id, started_at: startedAt + 1000, duration_ms: null, response_status: null, error: 'worker_lost', response_excerpt: null },
        ])
        .execute()
      const detail = await api.get<DeliveryDetail>(`/webhooks/deliveries/${deliveryIds[0]}`)
      expect(detail.status).toBe(200)
      expect(detail.body.body).toBe('{"type":"a.b","timestamp":"2024-05-06T07:08:09.999Z","data":{"n":0}}')
      expect(detail.body.attempts.map((attempt) => attempt.request)).toEqual([
        { url: null, headers: { 'webhook-id': eventIds[0], 'webhook-timestamp': String(Math.floor(startedAt / 1000)), 'webhook-signature': null } },
        null,
      ])
    })
  })

  describe('the event-type catalogue', () => {
    it("lists Herald's own types with descriptions and examples, then custom types once published", async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      type EventType = { name: string; description: string; example: unknown; custom: boolean }
      const before = await api.get<{ data: EventType[] }>('/webhooks/event-types')
      expect(before.status).toBe(200)
      const names = before.body.data.map((type) => type.name)
      for (const name of ['oauth.client.created', 'oauth.client.deleted', 'oauth.scope.created', 'oauth.settings.updated', 'oauth.key.rotated', 'oauth.token.revoked', 'webhook.endpoint.created', 'webhook.endpoint.disabled', 'webhook.endpoint.enabled', 'webhook.delivery.failed']) {
        expect(names).toContain(name)
      }
      for (const type of before.body.data) {
        expect(type.name).toMatch(/^(oauth|webhook)\./)
        expect(type.custom).toBe(false)
        expect(type.description.length).toBeGreaterThan(0)
        expect(typeof type.example).toBe('object')
        expect(type.example).not.toBeNull()
      }
      expect(new Set(names).size).toBe(names.length)

      for (let n = 0; n < 2; n++) expect((await api.post('/webhooks/events', { type: 'shipment.sent', data: { n } })).status).toBe(201)
      expect((await api.post('/webhooks/events', { type: 'a.custom.type', data: {} })).status).toBe(201)
      const after = await api.get<{ data: EventType[] }>('/webhooks/event-types')
      const custom = after.body.data.filter((type) => type.custom)
      expect(custom.map((type) => type.name).sort()).toEqual(['a.custom.type', 'shipment.sent'])
      expect(after.body.data.filter((type) => !type.custom)).toEqual(before.body.data)
      expect(new Set(after.body.data.map((type) => type.name)).size).toBe(after.body.data.length)
    })
  })

  describe('listing events', () => {
    it('lists newest first, pages by cursor without gaps or repeats, filters by type, and reads one', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const published: EventView[] = []
      for (let n = 0; n < 5; n++) {
        const event = await api.post<EventView>('/webhooks/events', { type: n % 2 === 0 ? 'list.even' : 'list.odd', data: { n } })
        expect(event.status).toBe(201)
        published.push(event.body)
        // Ids order by creation time to the millisecond: each event gets its own.
        h.current.clock.advanceSeconds(1)
      }
      const all = await api.get<Page<EventView>>('/webhooks/events?limit=200')
      const paged = await everyPage<EventView>(api, '/webhooks/events', 2)
      expect(ids(paged.items)).toEqual(ids(all.body.data))
      expect(new Set(ids(paged.items)).size).toBe(paged.items.length)
      expect(paged.pages).toBe(Math.ceil(all.body.data.length / 2))
      const created = paged.items.map((event) => Date.parse(event.created_at))
      expect(created).toEqual([...created].sort((x, y) => y - x))
      const mine = paged.items.filter((event) => event.type.startsWith('list.'))
      expect(ids(mine)).toEqual(ids(published).reverse())

      const odd = await everyPage<EventView>(api, '/webhooks/events?type=list.odd', 1)
      expect(ids(odd.items)).toEqual([published[3]!.id, published[1]!.id])
      const even = await api.get<Page<EventView>>('/webhooks/events?type=list.even&limit=2')
      expect(ids(even.body.data)).toEqual([published[4]!.id, published[2]!.id])
      expect(even.body.next_cursor).not.toBeNull()
      expect((await api.get<Page<EventView>>('/webhooks/events?type=list.none')).body).toEqual({ data: [], next_cursor: null })

      const one = await api.get<EventView>(`/webhooks/events/${published[2]!.id}`)
      expect(one.status).toBe(200)
      expect(one.body).toEqual(published[2])
      expect(one.body.data).toEqual({ n: 2 })
    })
  })

  describe('listing deliveries', () => {
    it('filters by endpoint, event, type, status and time, and pages newest first', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const wide = await subscribedEndpoint(api, receiver.current.url, ['dl.*'])
      const narrow = await subscribedEndpoint(api, receiver.current.url, ['dl.a'])

      const t1 = h.current.clock.now()
      const first = await api.post<EventView>('/webhooks/events', { type: 'dl.a', data: {} })
      await settled(api, `event_id=${first.body.id}`, 2)
      h.current.clock.advanceSeconds(10)
      const t2 = h.current.clock.now()
      const second = await api.post<EventView>('/webhooks/events', { type: 'dl.b', data: {} })
      await settled(api, `event_id=${second.body.id}`, 1)
      h.current.clock.advanceSeconds(10)
      const t3 = h.current.clock.now()
      const third = await api.post<EventView>('/webhooks/events', { type: 'dl.a', data: {} })
      await settled(api, `event_id=${third.body.id}`, 2)

      const iso = (ms: number) => encodeURIComponent(new Date(ms).toISOString())
      const query = async (q: string) => (await api.get<Page<Delivery>>(`/webhooks/deliveries?limit=200&${q}`)).body.data
      const all = await query('')
      expect(all).toHaveLength(5)
      expect(all.every((delivery) => delivery.status === 'succeeded')).toBe(true)

      const byEndpoint = await query(`endpoint_id=${narrow.id}`)
      expect(byEndpoint.map((delivery) => delivery.event_id)).toEqual([third.body.id, first.body.id])
      expect((await query(`endpoint_id=${wide.id}`)).map((delivery) => delivery.event_id)).toEqual([third.body.id, second.body.id, first.body.id])
      expect((await query(`event_id=${first.body.id}`)).map((delivery) => delivery.endpoint_id).sort()).toEqual([wide.id, narrow.id].sort())
      expect((await query('event_type=dl.b')).map((delivery) => delivery.event_id)).toEqual([second.body.id])
      expect(await query('event_type=dl.a')).toHaveLength(4)
      expect(await query(`event_type=dl.a&endpoint_id=${wide.id}`)).toHaveLength(2)
      expect(await query('status=succeeded')).toHaveLength(5)
      expect(await query('status=failed')).toEqual([])
      expect(await query('status=pending')).toEqual([])

      // since is inclusive, until exclusive.
      expect((await query(`since=${iso(t2)}`)).map((delivery) => delivery.event_id).sort()).toEqual([second.body.id, third.body.id, third.body.id].sort())
      expect((await query(`until=${iso(t2)}`)).map((delivery) => delivery.event_id)).toEqual([first.body.id, first.body.id])
      expect((await query(`since=${iso(t2)}&until=${iso(t3)}`)).map((delivery) => delivery.event_id)).toEqual([second.body.id])
      expect(await query(`since=${iso(t1)}&until=${iso(t3 + 1)}`)).toHaveLength(5)
      expect(await query(`since=${iso(t3 + 1)}`)).toEqual([])
      expect(await query(`since=${iso(t2)}&endpoint_id=${narrow.id}`)).toHaveLength(1)
      // Other spellings of the same instants: an offset, and a leap second read as the start of the next minute.
      const offset = (ms: number) => encodeURIComponent(new Date(ms + 90 * 60_000).toISOString().replace('Z', '+01:30'))
      expect((await query(`since=${offset(t2)}&until=${offset(t3)}`)).map((delivery) => delivery.event_id)).toEqual([second.body.id])
      const minuteAfterT3 = t3 - (t3 % 60_000) + 60_000
      const leapSecond = encodeURIComponent(new Date(minuteAfterT3 - 1000).toISOString().replace(/:59\.\d{3}Z$/, ':60Z'))
      expect(await query(`since=${leapSecond}`)).toEqual(await query(`since=${iso(minuteAfterT3)}`))
      expect(await query(`until=${leapSecond}`)).toEqual(await query(`until=${iso(minuteAfterT3)}`))

      for (const limit of [1, 2, 3]) {
        const paged = await everyPage<Delivery>(api, '/webhooks/deliveries', limit)
        expect(ids(paged.items)).toEqual(ids(all))
        expect(paged.pages).toBe(Math.ceil(5 / limit))
      }
      const created = all.map((delivery) => Date.parse((delivery as Delivery & { created_at: string }).created_at))
      expect(created).toEqual([...created].sort((x, y) => y - x))
      // Paging under a filter walks only the filtered rows.
      expect(ids((await everyPage<Delivery>(api, `/webhooks/deliveries?endpoint_id=${wide.id}`, 2)).items)).toEqual(ids(await query(`endpoint_id=${wide.id}`)))
    })
  })

  describe('subscription patterns', () => {
    it('routes exact types, prefix.* patterns and *, and makes one delivery per endpoint', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const at = (name: string) => receiver.current.url.replace(/\/hooks$/, `/${name}`)
      const prefix = await subscribedEndpoint(api, at('prefix'), ['invoice.*'])
      const exact = await subscribedEndpoint(api, at('exact'), ['invoice.paid'])
      const everything = await subscribedEndpoint(api, at('everything'), ['*'])
      const twice = await subscribedEndpoint(api, at('twice'), ['invoice.*'])
      expect((await api.post('/webhooks/subscriptions', { endpoint_id: twice.id, event_types: ['invoice.paid', 'order.paid', 'invoice.paid'] })).status).toBe(201)

      const publish = async (type: string) => (await api.post<EventView>('/webhooks/events', { type, data: {} })).body.id
      const invoicePaid = await publish('invoice.paid')
      const orderPaid = await publish('order.paid')
      const refund = await publish('invoice.refund.created')
      const bare = await publish('invoice')
      const lookalike = await publish('invoices.paid')
      const published = [invoicePaid, orderPaid, refund, bare, lookalike]

      const expected: Record<string, { endpoint: Endpoint; events: string[] }> = {
        prefix: { endpoint: prefix, events: [invoicePaid, refund] },
        exact: { endpoint: exact, events: [invoicePaid] },
        everything: { endpoint: everything, events: published },
        twice: { endpoint: twice, events: [invoicePaid, orderPaid, refund] },
      }
      // Published events fan out in the publishing transaction: every delivery exists by now.
      for (const [name, { endpoint, events }] of Object.entries(expected)) {
        const deliveries = await eventually(async () => {
          const page = await api.get<Page<Delivery>>(`/webhooks/deliveries?limit=200&endpoint_id=${endpoint.id}`)
          // The * endpoint also gets the account's own webhook.* events; only published ones are compared.
          const ofPublished = page.body.data.filter((delivery) => published.includes(delivery.event_id))
          return ofPublished.every((delivery) => delivery.status === 'succeeded') && ofPublished
        }, 10_000, `the deliveries to ${name}`)
        expect(deliveries.map((delivery) => delivery.event_id).sort(), name).toEqual([...events].sort())
      }
      await eventually(() => published.every((id) => receiver.current.messageIds.includes(id)), 10_000, 'every published event at *')
      for (const [name, { events }] of Object.entries(expected)) {
        const received = receiver.current.requests.filter((request) => request.path === `/${name}`).map((request) => String(request.headers['webhook-id']))
        expect(received.filter((id) => published.includes(id)).sort(), name).toEqual([...events].sort())
      }
      // Two matching subscriptions of one endpoint made one delivery, sent once.
      expect((await api.get<Page<Delivery>>(`/webhooks/deliveries?event_id=${invoicePaid}`)).body.data.map((delivery) => delivery.endpoint_id).sort()).toEqual(
        [prefix.id, exact.id, everything.id, twice.id].sort(),
      )
      expect(receiver.current.requests.filter((request) => request.path === '/twice' && request.headers['webhook-id'] === invoicePaid)).toHaveLength(1)

      // Deleting one of the two subscriptions leaves the other routing.
      const subscriptions = await api.get<Page<{ id: string; event_types: string[] }>>(`/webhooks/subscriptions?endpoint_id=${twice.id}`)
      expect(subscriptions.body.data.map((subscription) => subscription.event_types).sort()).toEqual([['invoice.*'], ['invoice.paid', 'order.paid']])
      const prefixOfTwice = subscriptions.body.data.find((subscription) => subscription.event_types[0] === 'invoice.*')!
      expect((await api.delete(`/webhooks/subscriptions/${prefixOfTwice.id}`)).status).toBe(204)
      const refundAgain = await publish('invoice.refund.created')
      const orderAgain = await publish('order.paid')
      await eventually(() => receiver.current.messageIds.includes(refundAgain) && receiver.current.messageIds.includes(orderAgain), 10_000, 'the later events')
      await settled(api, `event_id=${orderAgain}`, 2)
      expect((await api.get<Page<Delivery>>(`/webhooks/deliveries?event_id=${refundAgain}`)).body.data.map((delivery) => delivery.endpoint_id)).not.toContain(twice.id)
      expect((await api.get<Page<Delivery>>(`/webhooks/deliveries?event_id=${orderAgain}`)).body.data.map((delivery) => delivery.endpoint_id)).toContain(twice.id)
    })
  })

  describe('/metrics', () => {
    it('exposes the webhook metrics in Prometheus text after a delivery', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['metrics.*'])
      const published = await api.post<EventView>('/webhooks/events', { type: 'metrics.probe', data: {} })
      await settled(api, `event_id=${published.body.id}`, 1)
      expect((await api.patch(`/webhooks/endpoints/${endpoint.id}`, { status: 'disabled' })).status).toBe(200)
      expect((await api.post('/webhooks/events', { type: 'metrics.held', data: {} })).status).toBe(201)

      const metrics = await metricsText(h.current)
      expect(metrics.status).toBe(200)
      expect(metrics.contentType).toMatch(/^text\/plain/)
      for (const name of ['herald_webhook_attempts_total', 'herald_webhook_deliveries', 'herald_webhook_queue_due', 'herald_webhook_oldest_due_age_seconds', 'herald_webhook_attempt_duration_seconds', 'herald_webhook_publish_to_first_attempt_seconds']) {
        expect(metrics.text).toMatch(new RegExp(`^# TYPE ${name} `, 'm'))
      }
      expect(sample(metrics.text, 'herald_webhook_attempts_total{outcome="2xx"}')).toBeGreaterThanOrEqual(1)
      expect(sample(metrics.text, 'herald_webhook_attempt_duration_seconds_count')).toBeGreaterThanOrEqual(1)
      expect(sample(metrics.text, 'herald_webhook_publish_to_first_attempt_seconds_count')).toBeGreaterThanOrEqual(1)
      expect(sample(metrics.text, 'herald_webhook_deliveries_finished_total{status="succeeded"}')).toBeGreaterThanOrEqual(1)
      // Waiting deliveries are counted in the database; each status is there, even at zero.
      expect(sample(metrics.text, 'herald_webhook_deliveries{status="pending"}')).toBeGreaterThanOrEqual(0)
      expect(sample(metrics.text, 'herald_webhook_deliveries{status="held"}')).toBeGreaterThanOrEqual(1)
      expect(metrics.text).not.toMatch(/^herald_webhook_deliveries\{status="succeeded"\}/m)
    })

    it('counts a delivery in flight as due only once its lease has run out, and as due since then', async () => {
      // Two instances on a database of their own, so the gauges count this test's delivery alone. The holder's
      // worker keeps the delivery in flight (the receiver doesn't answer within the attempt's minute); the reader,
      // which runs no worker, serves the gauges. Moving only the reader's clock past the lease's end stands for a
      // holder that died: nothing claims the delivery again.
      const reader = await startHerald(dialect, { ...LOCAL_DELIVERY, worker: false })
      let holder: TestHerald | undefined
      try {
        holder = await startHerald(dialect, { env: { ...LOCAL_DELIVERY.env, HERALD_WEBHOOK_TIMEOUT_MS: '60000' }, shareWith: reader })
        const gauges = async () => {
          const { text } = await metricsText(reader)
          return { due: sample(text, 'herald_webhook_queue_due'), oldestSeconds: sample(text, 'herald_webhook_oldest_due_age_seconds') }
        }
        const api = await webhookApi(await createAccount(holder), holder.clock)
        const endpoint = await subscribedEndpoint(api, receiver.current.url, ['gauge.*'])
        receiver.current.respond = () => ({ status: 204, delayMs: 120_000 })
        await api.post('/webhooks/events', { type: 'gauge.probe', data: {} })
        await eventually(() => receiver.current.requests.length === 1, 10_000, 'the attempt')
        // In flight, the API gives the lease's end as the next attempt's time.
        const [inFlight] = (await api.get<Page<Delivery>>(`/webhooks/deliveries?endpoint_id=${endpoint.id}`)).body.data
        const leaseEnds = Date.parse(inFlight!.next_attempt_at!)
        expect(await gauges()).toEqual({ due: 0, oldestSeconds: 0 })

        reader.clock.advance(leaseEnds - 1000 - reader.clock.now())
        expect(await gauges(), 'a second before the lease ends').toEqual({ due: 0, oldestSeconds: 0 })
        reader.clock.advance(31_000)
        // Due since the lease ended, not since the delivery was first due (before the lease).
        expect(await gauges(), 'half a minute after the lease ended').toEqual({ due: 1, oldestSeconds: 30 })
      } finally {
        // Ends the held attempt, so that the holder's worker stops without waiting for it.
        await receiver.current.close()
        await holder?.close()
        await reader.close()
      }
    })

    it('leaves out of the queue the pending deliveries of an endpoint disabled, whose sweep has not reached them', async () => {
      // An instance without a worker, on a database of its own: nothing claims or sweeps, and the gauges count this
      // test's deliveries alone. The endpoint is disabled in the database, as a disable leaves the deliveries beyond
      // its first batch for the sweep.
      const reader = await startHerald(dialect, { ...LOCAL_DELIVERY, worker: false })
      try {
        const gauges = async () => {
          const { text } = await metricsText(reader)
          return { due: sample(text, 'herald_webhook_queue_due'), oldestSeconds: sample(text, 'herald_webhook_oldest_due_age_seconds'), pending: sample(text, 'herald_webhook_deliveries{status="pending"}') }
        }
        const account = await createAccount(reader)
        const api = await webhookApi(account, reader.clock)
        const active = await subscribedEndpoint(api, receiver.current.url, ['gauge.*'])
        const disabled = await subscribedEndpoint(api, receiver.current.url, ['gauge.*'])
        const db = reader.herald.database.db
        await insertBacklog(db, account.id, disabled.id, 'pending', 5, reader.clock.now())
        reader.clock.advance(10_000)
        await insertBacklog(db, account.id, active.id, 'pending', 3, reader.clock.now())
        await db.updateTable('webhook_endpoints').set({ status: 'disabled', disabled_reason: 'manual', disabled_at: reader.clock.now() }).where('id', '=', disabled.id).execute()
        reader.clock.advance(2_000)

        expect(await gauges()).toEqual({ due: 3, oldestSeconds: 2, pending: 8 })
      } finally {
        await reader.close()
      }
    })
  })

  describe('management scopes', () => {
    it('lets each scope do its part and nothing more, and a refusal writes nothing', async () => {
      const account = await createAccount(h.current)
      const admin = await webhookApi(account, h.current.clock)
      const endpoint = await subscribedEndpoint(admin, receiver.current.url, ['scoped.*'])
      const read = await managementToken(account, 'herald:webhooks:read')
      const write = await managementToken(account, 'herald:webhooks:write')
      const publish = await managementToken(account, 'herald:events:publish')
      const as = (token: string, method: string, path: string, json?: unknown) => call<{ code: string }>(`${account.base}${path}`, method, { token, ...(json !== undefined && { json }) })
      const expectInsufficient = (response: Awaited<ReturnType<typeof as>>, what: string) => {
        expect(response.status, what).toBe(403)
        expect(response.headers.get('content-type'), what).toMatch(/^application\/problem\+json/)
        expect(response.body.code, what).toBe('insufficient_scope')
        expect(response.headers.get('www-authenticate'), what).toMatch(/^Bearer error="insufficient_scope"/)
      }

      for (const path of ['/webhooks/endpoints', `/webhooks/endpoints/${endpoint.id}`, '/webhooks/subscriptions', '/webhooks/events', '/webhooks/deliveries', '/webhooks/event-types']) {
        expect((await as(read, 'GET', path)).status, path).toBe(200)
      }
      expectInsufficient(await as(read, 'POST', '/webhooks/endpoints', { url: receiver.current.url }), 'read: create endpoint')
      expectInsufficient(await as(read, 'PATCH', `/webhooks/endpoints/${endpoint.id}`, { description: 'x' }), 'read: change endpoint')
      expectInsufficient(await as(read, 'DELETE', `/webhooks/endpoints/${endpoint.id}`), 'read: delete endpoint')
      expectInsufficient(await as(read, 'GET', `/webhooks/endpoints/${endpoint.id}/secret`), 'read: reveal secret')
      expectInsufficient(await as(read, 'POST', `/webhooks/endpoints/${endpoint.id}/secret/rotate`, {}), 'read: rotate secret')
      expectInsufficient(await as(read, 'POST', '/webhooks/subscriptions', { endpoint_id: endpoint.id, event_types: ['*'] }), 'read: subscribe')
      expectInsufficient(await as(read, 'POST', '/webhooks/events', { type: 'scoped.event', data: {} }), 'read: publish')
      expectInsufficient(await as(write, 'POST', '/webhooks/events', { type: 'scoped.event', data: {} }), 'write: publish')
      expectInsufficient(await as(publish, 'GET', '/webhooks/events'), 'publish: list events')
      expectInsufficient(await as(publish, 'POST', '/webhooks/endpoints', { url: receiver.current.url }), 'publish: create endpoint')
      expectInsufficient(await as(write, 'GET', '/webhooks/endpoints'), 'write: list endpoints')

      // Nothing the refused calls asked for happened.
      expect(ids((await admin.get<Page<Endpoint>>('/webhooks/endpoints')).body.data)).toEqual([endpoint.id])
      expect((await admin.get<Page<unknown>>('/webhooks/subscriptions')).body.data).toHaveLength(1)
      expect((await admin.get<Page<EventView>>('/webhooks/events?type=scoped.event')).body.data).toEqual([])
      expect((await admin.get<Endpoint & { description: string }>(`/webhooks/endpoints/${endpoint.id}`)).body.description).toBe('')

      const published = await as(publish, 'POST', '/webhooks/events', { type: 'scoped.event', data: {} })
      expect(published.status).toBe(201)
      const created = await as(write, 'POST', '/webhooks/endpoints', { url: receiver.current.url })
      expect(created.status).toBe(201)
      await settled(admin, `endpoint_id=${endpoint.id}&event_type=scoped.event`, 1)
    })
  })
})

async function metricsText(h: TestHerald): Promise<{ status: number; contentType: string; text: string }> {
  const response = await fetch(`${h.origin}/metrics`)
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', text: await response.text() }
}

/** The value of one sample line, by its exact name and labels. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `))
  if (line === undefined) throw new Error(`no sample ${series} in the metrics`)
  return Number(line.slice(series.length + 1))
}
