import SQLite from 'better-sqlite3'
import { sql } from 'kysely'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { JITTER } from '../../src/webhooks/delivery/retry-schedule.js'
import { forEachDialect, type TestHerald, useHerald } from '../support/herald.js'
import { createAccount } from '../support/http.js'
import { eventually } from '../support/receiver.js'
import { type Delivery, LOCAL_DELIVERY, subscribedEndpoint, useReceiver, type WebhookApi, webhookApi } from './support.js'

/**
 * Failures reach the log: a delivery that ends `failed`, an endpoint disabled, and the worker backing off from the
 * database each write one warning, at most one per endpoint (or, for the database, one in all) per minute of the
 * injected clock, the next line counting those left out.
 */

const FAILED = 'webhook delivery failed: its retry schedule is exhausted'
const DISABLED = 'webhook endpoint disabled'
const UNREACHABLE = 'the webhook worker cannot reach the database; backing off'
const WARN = 40
/** The one retry's delay, and the advance that is sure to pass it whatever its jitter. */
const RETRY_SECONDS = 60
const PAST_RETRY_SECONDS = Math.ceil(RETRY_SECONDS * (1 + JITTER)) + 1

type LogLine = Record<string, unknown> & { level: number; msg: string }

/** The lines Herald logged since `from` (an index into its logs) with message `msg`. */
function logged(h: TestHerald, from: number, msg: string): LogLine[] {
  return h.logs
    .slice(from)
    .map((line) => JSON.parse(line) as LogLine)
    .filter((line) => line.msg === msg)
}

forEachDialect((dialect) => {
  describe('failed deliveries and disabled endpoints', () => {
    const h = useHerald(dialect, LOCAL_DELIVERY)
    const receiver = useReceiver()

    async function deliveryOf(api: WebhookApi, eventId: string, predicate: (delivery: Delivery) => boolean): Promise<Delivery> {
      return eventually(async () => {
        const page = await api.get<{ data: Delivery[] }>(`/webhooks/deliveries?event_id=${eventId}`)
        return page.body.data.find(predicate)
      }, 10_000, `a delivery of ${eventId}`)
    }

    /** An account that retries a failed delivery once, about a minute later. */
    async function retryingOnce(): Promise<{ api: WebhookApi; accountId: string }> {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      expect((await api.patch('/settings', { webhook_retry_schedule: [RETRY_SECONDS] })).status).toBe(200)
      return { api, accountId: account.id }
    }

    /** Publishes events of `types` and answers their ids once each has had its first attempt. */
    async function publishedAndAttempted(api: WebhookApi, types: string[], data: unknown = {}): Promise<string[]> {
      const ids: string[] = []
      for (const type of types) ids.push((await api.post<{ id: string }>('/webhooks/events', { type, data })).body.id)
      for (const id of ids) await deliveryOf(api, id, (delivery) => delivery.attempt_count === 1)
      return ids
    }

    /** Moves past the retry and waits until every one of `eventIds` has failed and what that logs is written. */
    async function failedAfterRetry(api: WebhookApi, eventIds: string[]): Promise<Delivery[]> {
      h.current.clock.advanceSeconds(PAST_RETRY_SECONDS)
      const failed: Delivery[] = []
      for (const id of eventIds) failed.push(await deliveryOf(api, id, (delivery) => delivery.status === 'failed'))
      await h.current.herald.webhooks.worker.runPass()
      return failed
    }

    it('logs a delivery that exhausts its schedule once, naming it, with nothing of its payload or response', async () => {
      const from = h.current.logs.length
      const { api, accountId } = await retryingOnce()
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['a.*'])
      receiver.current.respond = () => ({ status: 500, body: 'response-marker-7f3a' })

      const [eventId] = await publishedAndAttempted(api, ['a.b'], { card: 'payload-marker-91c2' })
      expect(logged(h.current, from, FAILED)).toEqual([])
      const [failed] = await failedAfterRetry(api, [eventId!])

      const lines = logged(h.current, from, FAILED)
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatchObject({ level: WARN, account: accountId, endpoint: endpoint.id, delivery: failed!.id, event: eventId, eventType: 'a.b', attempts: 2, lastStatus: 500, lastError: null })
      expect(lines[0]).not.toHaveProperty('omitted')
      const written = h.current.logs.slice(from).join('\n')
      expect(written).not.toContain('response-marker-7f3a')
      expect(written).not.toContain('payload-marker-91c2')
      expect(written).not.toContain(receiver.current.url)
    })

    it('logs an endpoint disabled by 410 Gone once', async () => {
      const from = h.current.logs.length
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['a.*'])
      receiver.current.respond = () => ({ status: 410 })

      const [eventId] = await publishedAndAttempted(api, ['a.b'])
      await h.current.herald.webhooks.worker.runPass()
      expect((await api.get<{ status: string }>(`/webhooks/endpoints/${endpoint.id}`)).body.status).toBe('disabled')
      expect((await deliveryOf(api, eventId!, () => true)).status).toBe('held')

      const lines = logged(h.current, from, DISABLED)
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatchObject({ level: WARN, account: account.id, endpoint: endpoint.id, reason: 'gone' })
      // Held, not failed: the deliveries go out again once the endpoint is enabled.
      expect(logged(h.current, from, FAILED)).toEqual([])
    })

    it('logs many failures at an endpoint within a minute once, then the number left out, and each endpoint apart', async () => {
      const from = h.current.logs.length
      const { api } = await retryingOnce()
      const noisy = await subscribedEndpoint(api, receiver.current.url, ['a.*'])
      const other = await subscribedEndpoint(api, `${receiver.current.url}/other`, ['b.*'])
      receiver.current.respond = () => ({ status: 503 })

      await failedAfterRetry(api, await publishedAndAttempted(api, ['a.1', 'a.2', 'a.3', 'b.1']))
      const first = logged(h.current, from, FAILED)
      expect(first.map((line) => line.endpoint).sort()).toEqual([noisy.id, other.id].sort())
      expect(first.every((line) => !('omitted' in line))).toBe(true)

      // The next failure at the noisy endpoint comes more than a minute after its line.
      const [late] = await failedAfterRetry(api, await publishedAndAttempted(api, ['a.4']))
      const lines = logged(h.current, from, FAILED).filter((line) => line.endpoint === noisy.id)
      expect(lines).toHaveLength(2)
      expect(lines[1]).toMatchObject({ level: WARN, delivery: late!.id, eventType: 'a.4', omitted: 2 })
    })
  })

  describe('a worker that cannot reach the database', () => {
    const h = useHerald(dialect, LOCAL_DELIVERY)

    it('logs its back-off once a minute, with the number of failed passes left out', async () => {
      const from = h.current.logs.length
      const worker = h.current.herald.webhooks.worker
      const outage = await databaseOutage(h.current)
      try {
        await outage.failing(worker.runPass())
        await outage.failing(worker.runPass())
        const lines = logged(h.current, from, UNREACHABLE)
        expect(lines).toHaveLength(1)
        expect(lines[0]).toMatchObject({ level: WARN, err: expect.any(Object) })
        expect(lines[0]).not.toHaveProperty('omitted')

        // The advance wakes the worker; its pass fails too, and the minute since the line has passed.
        h.current.clock.advanceSeconds(60)
        await outage.failing(worker.runPass())
        const after = logged(h.current, from, UNREACHABLE)
        expect(after).toHaveLength(2)
        expect(after[1]!.omitted).toBeGreaterThanOrEqual(1)
      } finally {
        await outage.end()
      }
      await worker.runPass()
      expect(logged(h.current, from, 'the webhook worker has resumed')).toHaveLength(1)
    })
  })
})

/**
 * Makes the database fail the worker's statements. SQLite: another connection holds the write lock and Herald waits
 * for no lock, so every write answers SQLITE_BUSY. PostgreSQL: another session locks the deliveries table, and every
 * session that waits for it is terminated (57P01, as a restarting server does) until the pass given has failed.
 */
async function databaseOutage(h: TestHerald): Promise<{ failing(pass: Promise<void>): Promise<void>; end(): Promise<void> }> {
  const config = h.database.config
  const { db } = h.herald.database
  if (config.dialect === 'sqlite') {
    await sql`pragma busy_timeout = 0`.execute(db)
    const other = new SQLite(config.filename)
    other.exec('begin immediate')
    return {
      failing: (pass) => pass,
      async end() {
        other.exec('rollback')
        other.close()
        await sql`pragma busy_timeout = 5000`.execute(db)
      },
    }
  }
  const holder = new pg.Client({ connectionString: config.connectionString })
  await holder.connect()
  await holder.query('begin')
  await holder.query('lock table webhook_deliveries in access exclusive mode')
  return {
    async failing(pass) {
      let done = false
      const passed = pass.finally(() => (done = true))
      while (!done) {
        // pg_stat_activity is read once per transaction, and the holder's is open: take a fresh snapshot.
        await holder.query('select pg_stat_clear_snapshot()')
        await holder.query("select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'")
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      await passed
    },
    async end() {
      await holder.query('commit')
      await holder.end()
    },
  }
}
