import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { TestClock } from '../support/clock.js'
import { type CreatedAccount, freePort, OPERATOR_TOKEN } from '../support/herald.js'
import { type HeraldProcess, running, spawnHerald as spawnProcess, stop } from '../support/herald-process.js'
import { basicAuth, call, createAccount, managementToken } from '../support/http.js'
import { PrivateCluster } from '../support/private-postgres.js'
import { eventually, Receiver } from '../support/receiver.js'
import { LOCAL_DELIVERY, subscribedEndpoint, webhookApi } from './support.js'

/** The outage: the database stopped for 10 s. */
const OUTAGE_MS = 10_000
/** Publishing lanes and the pause each takes between publishes: about the 20 publishes/s in all. */
const STEADY = { lanes: 2, pauseMs: 100 }
/** As fast as a few lanes go: most of the time some query is running on every pooled connection. */
const BUSY = { lanes: 8, pauseMs: 0 }
/** Leases last twice this: far longer than a short outage, so only the worker that made an attempt can record it. */
const ATTEMPT_TIMEOUT_MS = 10_000

function spawnHerald(command: 'serve' | 'worker', env: Record<string, string>): HeraldProcess {
  return spawnProcess(command, { ...LOCAL_DELIVERY.env, HERALD_WEBHOOK_TIMEOUT_MS: String(ATTEMPT_TIMEOUT_MS), LOG_LEVEL: 'warn', ...env })
}

async function status(url: string): Promise<number> {
  return (await fetch(url)).status
}

/**
 * Publishes events without end, a few lanes at a time, and sorts the answers: the ids of those acknowledged with
 * 201, the count of 503s (each must say when to retry), and anything else.
 */
class PublishLoad {
  readonly acknowledged: string[] = []
  unavailable = 0
  readonly unexpected: string[] = []
  #running = true
  readonly #lanes: Array<Promise<void>>

  constructor(
    private readonly account: CreatedAccount,
    private readonly token: string,
    { lanes, pauseMs }: { lanes: number; pauseMs: number },
  ) {
    this.#lanes = Array.from({ length: lanes }, () => this.#lane(pauseMs))
  }

  async #lane(pauseMs: number): Promise<void> {
    for (let n = 0; this.#running; n++) {
      try {
        const response = await call<{ id: string }>(`${this.account.base}/webhooks/events`, 'POST', { token: this.token, json: { type: 'load.tick', data: { n } } })
        if (response.status === 201) this.acknowledged.push(response.body.id)
        else if (response.status === 503 && response.headers.get('retry-after') === '1' && response.headers.get('content-type')?.startsWith('application/problem+json')) this.unavailable++
        else this.unexpected.push(`${response.status} ${response.text}`)
      } catch (error) {
        this.unexpected.push(String(error))
      }
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs))
    }
  }

  /** Resolves once `count` more publishes than now have been acknowledged. */
  async acknowledges(count: number, what: string): Promise<void> {
    const target = this.acknowledged.length + count
    await eventually(() => this.acknowledged.length >= target, 15_000, what)
  }

  async stop(): Promise<void> {
    this.#running = false
    await Promise.all(this.#lanes)
  }
}

const postgres = inject('dialects').includes('postgres')

describe.runIf(postgres)('herald serve and herald worker when PostgreSQL goes away', () => {
  let cluster: PrivateCluster
  let receiver: Receiver
  let serve: HeraldProcess | undefined
  let worker: HeraldProcess | undefined
  let origin: string
  let workerOrigin: string
  let account: CreatedAccount
  let token: string

  beforeAll(async () => {
    cluster = await PrivateCluster.create()
    await cluster.query('create database herald')
    receiver = await Receiver.start(() => ({ status: 204 }))
    const [port, workerPort] = [await freePort(), await freePort()]
    origin = `http://127.0.0.1:${port}`
    workerOrigin = `http://127.0.0.1:${workerPort}`
    const env = { DATABASE_URL: cluster.url('herald'), HERALD_SECRET_KEY: randomBytes(32).toString('base64') }
    serve = spawnHerald('serve', { ...env, PORT: String(port), PUBLIC_URL: origin, HERALD_OPERATOR_TOKEN: OPERATOR_TOKEN })
    // The worker starts once serve has migrated the database.
    await eventually(async () => (await status(`${origin}/readyz`).catch(() => 0)) === 200, 20_000, 'herald serve to be ready')
    worker = spawnHerald('worker', { ...env, HERALD_WORKER_PORT: String(workerPort) })
    await eventually(async () => (await status(`${workerOrigin}/readyz`).catch(() => 0)) === 200, 20_000, 'herald worker to be ready')
    account = await createAccount({ origin })
    await subscribedEndpoint(await webhookApi(account, new TestClock()), receiver.url, ['load.*'])
    token = await managementToken(account)
  })

  afterAll(async () => {
    await Promise.all([stop(serve), stop(worker)])
    await receiver?.close()
    await cluster?.destroy()
  })

  /** Every acknowledged publish reaches the receiver; both processes are still up, and neither answered a 500. */
  async function everyAcknowledgedPublishDelivered(load: PublishLoad): Promise<void> {
    await load.stop()
    expect(load.unexpected).toEqual([])
    const acknowledged = new Set(load.acknowledged)
    await eventually(() => {
      const received = new Set(receiver.messageIds)
      return [...acknowledged].every((id) => received.has(id))
    }, 30_000, 'every acknowledged publish to be delivered')
    expect(running(serve!)).toBe(true)
    expect(running(worker!)).toBe(true)
    // Neither a 500 nor an error that escaped its handler (an 'error' event, a rejection), even one survived.
    for (const lines of [serve!.lines, worker!.lines]) expect(lines.filter((line) => /internal_error|unhandled/i.test(line))).toEqual([])
  }

  it('keeps both processes up through pg_terminate_backend of their connections under load', async () => {
    const load = new PublishLoad(account, token, BUSY)
    for (let round = 0; round < 3; round++) {
      await load.acknowledges(50, 'publishes between terminations')
      // In the select list, so that only the rows the filter kept are terminated (the planner may order a filter's terms).
      const terminated = await cluster.query<{ pid: number }>("select pid, pg_terminate_backend(pid) from pg_stat_activity where datname = 'herald' and pid <> pg_backend_pid()")
      // serve's pool and listener, the worker's pool and listener.
      expect(terminated.length).toBeGreaterThanOrEqual(4)
    }
    await load.acknowledges(50, 'publishes after the terminations')
    await everyAcknowledgedPublishDelivered(load)
  })

  it('keeps both processes up through a failover-style restart under load', async () => {
    const load = new PublishLoad(account, token, BUSY)
    await load.acknowledges(50, 'publishes before the restart')
    await cluster.stop()
    await cluster.start()
    await load.acknowledges(50, 'publishes after the restart')
    await everyAcknowledgedPublishDelivered(load)
  })

  it('records an attempt that finished while the database was away once it is back, without sending it again', async () => {
    let release = () => {}
    const released = new Promise<void>((resolve) => (release = resolve))
    receiver.respond = (request) => ({ status: 204, ...(request.body.includes('"held"') && { until: released }) })
    try {
      const published = await call<{ id: string }>(`${account.base}/webhooks/events`, 'POST', { token, json: { type: 'load.held', data: { held: true } } })
      expect(published.status).toBe(201)
      await eventually(() => receiver.messageIds.includes(published.body.id), 10_000, 'the attempt to start')

      await cluster.stop()
      // The receiver answers while the database is away: the worker can't record the attempt yet.
      release()
      await cluster.start()
      const delivery = await eventually(async () => {
        const rows = await cluster.query<{ status: string; attempt_count: number }>('select status, attempt_count from webhook_deliveries where event_id = $1', [published.body.id], 'herald')
        return rows[0]?.status === 'succeeded' && rows[0]
      }, ATTEMPT_TIMEOUT_MS, 'the attempt to be recorded (well before its lease ends)')
      expect(delivery.attempt_count).toBe(1)
      expect(receiver.messageIds.filter((id) => id === published.body.id)).toHaveLength(1)
    } finally {
      release()
      receiver.respond = () => ({ status: 204 })
    }
  })

  it('keeps both processes up while the database is stopped for 10 s, answers 503 meanwhile and resumes when it is back', async () => {
    const load = new PublishLoad(account, token, STEADY)
    await load.acknowledges(10, 'publishes before the outage')
    const logged = { serve: serve!.lines.length, worker: worker!.lines.length }

    await cluster.stop()
    const stoppedAt = Date.now()
    const unavailableBefore = load.unavailable
    await eventually(() => load.unavailable > unavailableBefore, 5000, 'a publish to answer 503')
    for (const base of [origin, workerOrigin]) {
      expect(await status(`${base}/readyz`)).toBe(503)
      expect(await status(`${base}/healthz`)).toBe(200)
    }
    // OAuth endpoints answer in their own shape (RFC 6749 §5.2): revocation has to write the token's id.
    const revoke = await call(`${account.base}/oauth/revoke`, 'POST', { headers: { authorization: basicAuth(account.clientId, account.clientSecret) }, form: { token } })
    expect([revoke.status, revoke.headers.get('retry-after'), revoke.body]).toEqual([503, '1', expect.objectContaining({ error: 'temporarily_unavailable' })])
    const acknowledgedDuringOutage = load.acknowledged.length
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS - (Date.now() - stoppedAt)))
    expect(running(serve!) && running(worker!)).toBe(true)
    expect(load.acknowledged.length).toBe(acknowledgedDuringOutage)

    await cluster.start()
    await eventually(async () => (await status(`${origin}/readyz`)) === 200 && (await status(`${workerOrigin}/readyz`)) === 200, 5000, 'both processes to be ready again')
    await load.acknowledges(20, 'publishes after the outage')
    await everyAcknowledgedPublishDelivered(load)
    // The outage is reported now and then, not once per failed request or retry.
    expect(serve!.lines.length - logged.serve).toBeLessThan(20)
    expect(worker!.lines.length - logged.worker).toBeLessThan(20)
  }, 60_000)
})
