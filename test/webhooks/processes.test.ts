import { sql } from 'kysely'
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest'
import { freePort, startHerald, type TestHerald } from '../support/herald.js'
import { type HeraldProcess, running, spawnHerald, stop } from '../support/herald-process.js'
import { createAccount } from '../support/http.js'
import { eventually, Receiver } from '../support/receiver.js'
import { LOCAL_DELIVERY, leasedTo, subscribedEndpoint, type WebhookApi, webhookApi } from './support.js'

const EVENTS = 2000
/** The endpoint's cap: below either worker's own concurrency, so only counting each other's leases keeps to it. */
const MAX_IN_FLIGHT = 50
/** Short attempts, so a killed worker's leases (twice this) run out within the test. */
const ATTEMPT_TIMEOUT_MS = 2000

/** `herald worker` as its own process on the test's PostgreSQL database; `env` adds settings. */
function spawnWorker(h: TestHerald, env: Record<string, string> = {}): HeraldProcess {
  if (h.herald.config.database.dialect !== 'postgres') throw new Error('worker processes share PostgreSQL')
  const { connectionString } = h.herald.config.database
  return spawnHerald('worker', { DATABASE_URL: connectionString, HERALD_SECRET_KEY: h.secretKey, ...LOCAL_DELIVERY.env, HERALD_WEBHOOK_TIMEOUT_MS: String(ATTEMPT_TIMEOUT_MS), LOG_LEVEL: 'warn', ...env })
}

/** Publishes `count` events with a few requests in flight at once; answers their ids. */
async function publishMany(api: WebhookApi, count: number): Promise<string[]> {
  const ids: string[] = []
  let next = 0
  const lane = async () => {
    while (next < count) {
      const n = next++
      const response = await api.post<{ id: string }>('/webhooks/events', { type: 'load.tick', data: { n } })
      if (response.status !== 201) throw new Error(`publish failed: ${response.status}`)
      ids.push(response.body.id)
    }
  }
  await Promise.all(Array.from({ length: 16 }, lane))
  return ids
}

async function statusCounts(h: TestHerald, endpointId: string): Promise<Record<string, number>> {
  const rows = await h.herald.database.db
    .selectFrom('webhook_deliveries')
    .select((eb) => ['status', eb.fn.countAll<number>().as('count')])
    .where('endpoint_id', '=', endpointId)
    .groupBy('status')
    .execute()
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.count)]))
}

const postgres = inject('dialects').includes('postgres')

describe.runIf(postgres)('delivery workers as separate processes on PostgreSQL', () => {
  let h: TestHerald
  let receiver: Receiver
  const workers: HeraldProcess[] = []

  beforeAll(async () => {
    // This process serves the API only; the delivery happens in the spawned workers.
    h = await startHerald('postgres', { ...LOCAL_DELIVERY, worker: false })
  })
  afterEach(async () => {
    await Promise.all(workers.splice(0).map(stop))
    await receiver?.close()
  })
  afterAll(async () => {
    await h?.close()
  })

  /** An account whose endpoint is disabled while `EVENTS` events are published, so they wait as held. */
  async function heldBacklog(): Promise<{ api: WebhookApi; endpointId: string; eventIds: string[] }> {
    const account = await createAccount(h)
    const api = await webhookApi(account, h.clock)
    const endpoint = await subscribedEndpoint(api, receiver.url, ['load.*'], { max_in_flight: MAX_IN_FLIGHT })
    await api.patch(`/webhooks/endpoints/${endpoint.id}`, { status: 'disabled' })
    const eventIds = await publishMany(api, EVENTS)
    return { api, endpointId: endpoint.id, eventIds }
  }

  it('loses nothing when a worker is killed mid-way: its deliveries come back after their lease', async () => {
    receiver = await Receiver.start(() => ({ status: 204, delayMs: 20 }))
    const { api, endpointId, eventIds } = await heldBacklog()
    const first = spawnWorker(h)
    workers.push(first)
    const killed = new Promise<void>((resolve) => {
      const original = receiver.respond
      receiver.respond = (request) => {
        if (receiver.requests.length === 500 && running(first)) {
          first.child.kill('SIGKILL')
          resolve()
        }
        return original(request)
      }
    })
    expect((await api.patch(`/webhooks/endpoints/${endpointId}`, { status: 'active' })).status).toBe(200)
    await killed
    workers.push(spawnWorker(h))

    const counts = await eventually(async () => {
      const counts = await statusCounts(h, endpointId)
      return counts.succeeded === EVENTS && counts
    }, 60_000, 'every delivery to succeed')
    expect(counts).toEqual({ succeeded: EVENTS })
    expect(new Set(receiver.messageIds)).toEqual(new Set(eventIds))

    const attempts = await sql<{ delivery_id: string; number: number; response_status: number | null; error: string | null }>`
      select a.delivery_id, a.number, a.response_status, a.error from webhook_attempts a
      join webhook_deliveries d on d.id = a.delivery_id where d.endpoint_id = ${endpointId}`.execute(h.herald.database.db)
    const byDelivery = new Map<string, typeof attempts.rows>()
    for (const attempt of attempts.rows) byDelivery.set(attempt.delivery_id, [...(byDelivery.get(attempt.delivery_id) ?? []), attempt])
    expect(byDelivery.size).toBe(EVENTS)
    for (const list of byDelivery.values()) {
      // Numbered from 1 without gaps, ending in the success.
      expect(list.map((a) => a.number).sort((a, b) => a - b)).toEqual(list.map((_, i) => i + 1))
      expect(list.reduce((last, a) => (a.number > last.number ? a : last)).response_status).toBe(204)
    }
    const lost = attempts.rows.filter((attempt) => attempt.error === 'worker_lost')
    expect(lost.length).toBeGreaterThan(0)
    expect(lost.every((attempt) => attempt.response_status === null)).toBe(true)
    // The killed worker's leases ran out and count for nothing; the survivor's were released as it recorded.
    expect(await leasedTo(h.herald.database.db, endpointId, Date.now())).toBe(0)
  }, 120_000)

  it('shares the work between two workers without attempting a delivery twice at once, each reporting its own attempts', async () => {
    const inFlight = new Set<string>()
    const overlaps: string[] = []
    receiver = await Receiver.start((request) => {
      const id = String(request.headers['webhook-id'])
      if (inFlight.has(id)) overlaps.push(id)
      inFlight.add(id)
      setTimeout(() => inFlight.delete(id), 5).unref()
      return { status: 204, delayMs: 5 }
    })
    const { api, endpointId, eventIds } = await heldBacklog()
    const ports = [await freePort(), await freePort()]
    workers.push(...ports.map((port) => spawnWorker(h, { HERALD_WORKER_PORT: String(port), HOST: '127.0.0.1' })))
    expect((await api.patch(`/webhooks/endpoints/${endpointId}`, { status: 'active' })).status).toBe(200)

    await eventually(async () => (await statusCounts(h, endpointId)).succeeded === EVENTS, 60_000, 'every delivery to succeed')
    expect(overlaps).toEqual([])
    // Each worker counts the other's leases against the endpoint's cap.
    expect(receiver.maxConcurrent).toBeLessThanOrEqual(MAX_IN_FLIGHT)
    expect(await leasedTo(h.herald.database.db, endpointId, Date.now())).toBe(0)
    const received = receiver.messageIds
    expect(new Set(received)).toEqual(new Set(eventIds))
    // No lease was lost, so every event arrived exactly once and every delivery has one attempt.
    expect(received).toHaveLength(EVENTS)
    const { rows } = await sql<{ count: number }>`select count(*)::int as count from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.endpoint_id = ${endpointId}`.execute(h.herald.database.db)
    expect(rows[0]!.count).toBe(EVENTS)

    // Each worker reports its own attempts on HERALD_WORKER_PORT, so together they account for every one.
    const reported = await Promise.all(
      ports.map(async (port) => {
        expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200)
        const metrics = await fetch(`http://127.0.0.1:${port}/metrics`)
        expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/)
        return successfulAttempts(await metrics.text())
      }),
    )
    expect(reported[0]! + reported[1]!).toBe(EVENTS)
  }, 120_000)
})

/** The `herald_webhook_attempts_total{outcome="2xx"}` sample of a Prometheus text exposition; 0 when absent. */
function successfulAttempts(exposition: string): number {
  const sample = /^herald_webhook_attempts_total\{outcome="2xx"\} (\d+)$/m.exec(exposition)
  return sample ? Number(sample[1]) : 0
}
