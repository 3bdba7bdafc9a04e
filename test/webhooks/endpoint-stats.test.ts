import { expect, it } from 'vitest'
import type { EndpointStatsView } from '../../src/webhooks/endpoints/endpoint-stats.js'
import { forEachDialect, useHerald } from '../support/herald.js'
import { createAccount } from '../support/http.js'
import { eventually } from '../support/receiver.js'
import { LOCAL_DELIVERY, type WebhookApi, subscribedEndpoint, useReceiver, webhookApi } from './support.js'

const HOUR = 3600_000

type Stats = EndpointStatsView

/** `GET /webhooks/endpoints/{id}/stats`: an endpoint's attempts per hour or day, counted as they are recorded. */
forEachDialect((dialect) => {
  const h = useHerald(dialect, LOCAL_DELIVERY)
  const receiver = useReceiver()

  async function publish(api: WebhookApi, count: number): Promise<void> {
    for (let i = 0; i < count; i++) expect((await api.post('/webhooks/events', { type: 'stats.tick', data: { i } })).status).toBe(201)
  }

  async function attempted(api: WebhookApi, endpointId: string, count: number): Promise<void> {
    await eventually(async () => {
      const page = await api.get<{ data: Array<{ attempt_count: number }> }>(`/webhooks/deliveries?endpoint_id=${endpointId}`)
      return page.body.data.reduce((sum, delivery) => sum + delivery.attempt_count, 0) >= count
    }, 10_000, `${count} attempts`)
    await h.current.herald.webhooks.worker.runPass()
  }

  it('counts attempts per hour by outcome, with the answered ones\' durations, and every bucket of the day', async () => {
    const account = await createAccount(h.current)
    const api = await webhookApi(account, h.current.clock)
    const endpoint = await subscribedEndpoint(api, receiver.current.url, ['stats.*'])
    let calls = 0
    receiver.current.respond = () => ({ status: ++calls === 2 ? 500 : 204 })
    await publish(api, 3)
    await attempted(api, endpoint.id, 3)
    const firstHour = h.current.clock.now() - (h.current.clock.now() % HOUR)

    h.current.clock.advance(2 * HOUR)
    await attempted(api, endpoint.id, 4)
    await publish(api, 1)
    await attempted(api, endpoint.id, 5)

    const stats = await api.get<Stats>(`/webhooks/endpoints/${endpoint.id}/stats`)
    expect(stats.status, JSON.stringify(stats.body)).toBe(200)
    expect(stats.body).toMatchObject({ endpoint_id: endpoint.id, bucket: 'hour' })
    expect(stats.body.data).toHaveLength(24)
    expect(Date.parse(stats.body.until) - Date.parse(stats.body.since)).toBe(24 * HOUR)
    const at = (ms: number) => stats.body.data.find((bucket) => Date.parse(bucket.start) === ms)!
    // The 500 was retried (5 s later on the default schedule, reached by the two-hour jump) and succeeded.
    expect(at(firstHour)).toMatchObject({ succeeded: 2, failed: 1, errored: 0 })
    expect(at(firstHour + 2 * HOUR)).toMatchObject({ succeeded: 2, failed: 0, errored: 0 })
    expect(at(firstHour + HOUR)).toEqual({ start: new Date(firstHour + HOUR).toISOString(), succeeded: 0, failed: 0, errored: 0, mean_duration_ms: null, max_duration_ms: null })
    expect(at(firstHour).mean_duration_ms).toEqual(expect.any(Number))
    expect(at(firstHour).max_duration_ms!).toBeGreaterThanOrEqual(at(firstHour).mean_duration_ms!)

    const days = await api.get<Stats>(`/webhooks/endpoints/${endpoint.id}/stats?bucket=day&since=${new Date(firstHour - 3 * 24 * HOUR).toISOString()}`)
    expect(days.status).toBe(200)
    const total = days.body.data.reduce((sum, bucket) => sum + bucket.succeeded + bucket.failed + bucket.errored, 0)
    expect(total).toBe(5)
  })

  it('counts an attempt that got no answer as errored', async () => {
    const account = await createAccount(h.current)
    const api = await webhookApi(account, h.current.clock)
    const endpoint = await subscribedEndpoint(api, 'http://127.0.0.1:9/closed', ['stats.*'])
    await publish(api, 1)
    await attempted(api, endpoint.id, 1)
    const stats = await api.get<Stats>(`/webhooks/endpoints/${endpoint.id}/stats`)
    const counted = stats.body.data.filter((bucket) => bucket.errored > 0)
    expect(counted).toEqual([expect.objectContaining({ succeeded: 0, failed: 0, errored: 1, mean_duration_ms: null })])
  })

  it('refuses a bad range with a 400 and another account\'s endpoint with a 404', async () => {
    const account = await createAccount(h.current)
    const api = await webhookApi(account, h.current.clock)
    const endpoint = await subscribedEndpoint(api, receiver.current.url, ['stats.*'])
    const now = h.current.clock.now()
    const iso = (ms: number) => new Date(ms).toISOString()
    for (const query of [
      `since=${iso(now)}&until=${iso(now - HOUR)}`,
      `since=${iso(now - 40 * 24 * HOUR)}`,
      `until=${iso(now - 40 * 24 * HOUR)}`,
      'bucket=minute',
      'since=yesterday',
      'extra=1',
    ]) {
      expect((await api.get(`/webhooks/endpoints/${endpoint.id}/stats?${query}`)).status, query).toBe(400)
    }
    // The oldest day asked for by day: since lies within the 31 days, though its bucket starts before.
    const month = await api.get<Stats>(`/webhooks/endpoints/${endpoint.id}/stats?bucket=day&since=${iso(now - 31 * 24 * HOUR + 60_000)}`)
    expect(month.status).toBe(200)
    expect(month.body.data.length).toBeLessThanOrEqual(32)
    // A far future would be millions of empty buckets: the range ends now.
    const future = await api.get<Stats>(`/webhooks/endpoints/${endpoint.id}/stats?until=${iso(now + 3 * 365 * 24 * HOUR)}`)
    expect(future.status).toBe(200)
    expect(Date.parse(future.body.until)).toBeLessThanOrEqual(now + HOUR)
    expect(future.body.data).toHaveLength(24)
    const old = await api.get<{ errors: Array<{ pointer: string }> }>(`/webhooks/endpoints/${endpoint.id}/stats?until=${iso(now - 40 * 24 * HOUR)}`)
    expect(old.body.errors.map((error) => error.pointer)).toEqual(['/querystring/until'])
    const other = await webhookApi(await createAccount(h.current, 'other'), h.current.clock)
    expect((await other.get(`/webhooks/endpoints/${endpoint.id}/stats`)).status).toBe(404)
    expect((await api.get('/webhooks/endpoints/ep_00000000000000000000000000/stats')).status).toBe(404)
  })

  it('prunes hours older than 31 days', async () => {
    const account = await createAccount(h.current)
    const api = await webhookApi(account, h.current.clock)
    const endpoint = await subscribedEndpoint(api, receiver.current.url, ['stats.*'])
    await publish(api, 1)
    await attempted(api, endpoint.id, 1)
    const { db } = h.current.herald.database
    const rows = () => db.selectFrom('webhook_endpoint_hours').select('hour').where('endpoint_id', '=', endpoint.id).execute()
    expect(await rows()).toHaveLength(1)
    h.current.clock.advance(31 * 24 * HOUR)
    await h.current.herald.pruners.endpointHours.runOnce()
    expect(await rows()).toHaveLength(1)
    h.current.clock.advance(2 * 24 * HOUR)
    await h.current.herald.pruners.endpointHours.runOnce()
    expect(await rows()).toHaveLength(0)
  })
})
