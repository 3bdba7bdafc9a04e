import { expect, it } from 'vitest'
import { JITTER } from '../../src/webhooks/delivery/retry-schedule.js'
import { forEachDialect, useHerald } from '../support/herald.js'
import { createAccount } from '../support/http.js'
import { eventually, Receiver } from '../support/receiver.js'
import { type Delivery, LOCAL_DELIVERY, subscribedEndpoint, useReceiver, type WebhookApi, webhookApi } from './support.js'

/** The account's retry delays, in seconds: shorter than the worker's 5 s fallback poll. */
const SCHEDULE = [3, 3]
/**
 * How long a due retry may take to go out once the clock has reached it: a pass and a request. The fallback poll
 * comes 5 s after the last pass, so a retry left to it misses this.
 */
const PROMPTLY_MS = 2000

forEachDialect((dialect) => {
  // The worker wakes by its own signals, alarms and poll only: advancing the clock starts no pass by itself.
  const h = useHerald(dialect, { ...LOCAL_DELIVERY, wakeOnAdvance: false })
  const receiver = useReceiver()

  async function delivery(api: WebhookApi, eventId: string, attempts: number): Promise<Delivery> {
    return eventually(async () => {
      const page = await api.get<{ data: Delivery[] }>(`/webhooks/deliveries?event_id=${eventId}`)
      const found = page.body.data.find((d) => d.attempt_count === attempts)
      return found && (await api.get<Delivery>(`/webhooks/deliveries/${found.id}`)).body
    }, 10_000, `delivery of ${eventId} after ${attempts} attempts`)
  }

  /** Moves the clock to the delivery's next attempt, checks it is due by the schedule, and awaits the attempt. */
  async function reachRetry(api: WebhookApi, eventId: string, attempted: number): Promise<void> {
    const pending = await delivery(api, eventId, attempted)
    expect(pending.status).toBe('pending')
    const due = Date.parse(pending.next_attempt_at!)
    const delay = SCHEDULE[attempted - 1]! * 1000
    expect(due - h.current.clock.now()).toBeGreaterThanOrEqual(delay * (1 - JITTER))
    expect(due - h.current.clock.now()).toBeLessThanOrEqual(delay * (1 + JITTER))
    h.current.clock.advance(due - h.current.clock.now())
    await eventually(() => receiver.current.requests.length === attempted + 1, PROMPTLY_MS, `attempt ${attempted + 1} once it is due`)
    const retried = await delivery(api, eventId, attempted + 1)
    expect(Date.parse(retried.attempts!.at(-1)!.started_at)).toBe(due)
  }

  /**
   * Runs `use` on an account on SCHEDULE with an endpoint on the receiver for `retried.*`, and one for `busy.*` on a
   * receiver that holds every attempt open until `use` is done: what keeps the worker busy.
   */
  async function withBusyEndpoint(use: (api: WebhookApi, busy: Receiver) => Promise<void>): Promise<void> {
    const account = await createAccount(h.current)
    const api = await webhookApi(account, h.current.clock)
    expect((await api.patch('/settings', { webhook_retry_schedule: SCHEDULE })).status).toBe(200)
    await subscribedEndpoint(api, receiver.current.url, ['retried.*'])
    let release = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    const busy = await Receiver.start(() => ({ status: 204, until: held }))
    try {
      await subscribedEndpoint(api, busy.url, ['busy.*'])
      await use(api, busy)
    } finally {
      release()
      await busy.close()
    }
  }

  it('attempts each retry when the clock reaches its due time, idle or busy, not at the next fallback poll', async () => {
    await withBusyEndpoint(async (api, busy) => {
      const statuses = [500, 500, 204]
      receiver.current.respond = () => ({ status: statuses[receiver.current.requests.length - 1]! })

      const published = await api.post<{ id: string }>('/webhooks/events', { type: 'retried.once', data: {} })
      expect(published.status).toBe(201)
      await eventually(() => receiver.current.requests.length === 1, 10_000, 'the first attempt')
      // The worker is idle: the first retry is its only wake-up before the poll.
      await reachRetry(api, published.body.id, 1)

      expect((await api.post('/webhooks/events', { type: 'busy.now', data: {} })).status).toBe(201)
      await eventually(() => busy.requests.length === 1, 10_000, 'the attempt that keeps the worker busy')
      await reachRetry(api, published.body.id, 2)
      expect((await delivery(api, published.body.id, 3)).status).toBe('succeeded')
    })
  })

  it('attempts on time a retry scheduled while the worker is busy, which no idle pass looked up', async () => {
    await withBusyEndpoint(async (api, busy) => {
      expect((await api.post('/webhooks/events', { type: 'busy.now', data: {} })).status).toBe(201)
      await eventually(() => busy.requests.length === 1, 10_000, 'the attempt that keeps the worker busy')
      const statuses = [500, 204]
      receiver.current.respond = () => ({ status: statuses[receiver.current.requests.length - 1]! })

      // The first attempt fails while the other is open: only the write of its outcome knows when the retry is due.
      const published = await api.post<{ id: string }>('/webhooks/events', { type: 'retried.busy', data: {} })
      expect(published.status).toBe(201)
      await eventually(() => receiver.current.requests.length === 1, 10_000, 'the first attempt')
      await reachRetry(api, published.body.id, 1)
      expect((await delivery(api, published.body.id, 2)).status).toBe('succeeded')
    })
  })
})
