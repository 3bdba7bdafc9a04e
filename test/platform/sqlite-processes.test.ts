import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { TestClock } from '../support/clock.js'
import { createTestDatabase, type TestDatabase } from '../support/dialects.js'
import { type CreatedAccount, freePort, OPERATOR_TOKEN } from '../support/herald.js'
import { databaseUrl, exited, type HeraldProcess, ready, running, spawnHerald, stop } from '../support/herald-process.js'
import { type ApiResponse, basicAuth, call, createAccount, managementToken } from '../support/http.js'
import { eventually, Receiver } from '../support/receiver.js'
import { Browser, LoginApp, authorizationUrl, prepareSignIn, redeemCode, signIn, type SignInClient } from '../support/sign-in.js'
import { LOCAL_DELIVERY, subscribedEndpoint, webhookApi } from '../webhooks/support.js'

/** How long the processes take writes at once: the 30 s. */
const LOAD_MS = 30_000
/** Requests in flight at once against each serve. */
const LANES_PER_SERVE = 3

/** The account as one serve's clients reach it: tokens name the one issuer (PUBLIC_URL), requests go to `origin`. */
function through(account: CreatedAccount, origin: string): CreatedAccount {
  return { ...account, base: `${origin}/accounts/${account.id}` }
}

/**
 * One client of one serve writing as fast as it gets answers: a client created, a refresh token rotated, an event
 * published, a setting changed, in turn. Every answer's status is kept.
 */
class WritingLane {
  readonly statuses: number[] = []
  readonly failures: string[] = []

  private constructor(
    private readonly account: CreatedAccount,
    private readonly token: string,
    private readonly rp: SignInClient,
    private refreshToken: string,
  ) {}

  static async start(account: CreatedAccount, rp: SignInClient, subject: string): Promise<WritingLane> {
    const callback = await signIn(new Browser(), await LoginApp.of(account), authorizationUrl(account.base, rp.clientId, { scope: 'openid offline_access' }), subject)
    const tokens = await redeemCode<{ refresh_token: string }>(account.base, rp, callback)
    expect(tokens.status, tokens.text).toBe(200)
    return new WritingLane(account, await managementToken(account), rp, tokens.body.refresh_token)
  }

  async run(until: number): Promise<void> {
    const steps = [() => this.#createClient(), () => this.#refresh(), () => this.#publish(), () => this.#patchSettings()]
    for (let n = 0; Date.now() < until; n++) {
      const response = await steps[n % steps.length]!()
      this.statuses.push(response.status)
      if (response.status >= 300) this.failures.push(`${response.status} ${response.text}`)
    }
  }

  #createClient(): Promise<ApiResponse> {
    return call(`${this.account.base}/oauth/clients`, 'POST', { token: this.token, json: { client_name: 'lane', grant_types: ['client_credentials'], response_types: [] } })
  }

  async #refresh(): Promise<ApiResponse> {
    const response = await call<{ refresh_token: string }>(`${this.account.base}/oauth/tokens`, 'POST', {
      headers: { authorization: basicAuth(this.rp.clientId, this.rp.clientSecret) },
      form: { grant_type: 'refresh_token', refresh_token: this.refreshToken },
    })
    if (response.status === 200) this.refreshToken = response.body.refresh_token
    return response
  }

  #publish(): Promise<ApiResponse> {
    return call(`${this.account.base}/webhooks/events`, 'POST', { token: this.token, json: { type: 'load.tick', data: {} } })
  }

  #patchSettings(): Promise<ApiResponse> {
    return call(`${this.account.base}/settings`, 'PATCH', { token: this.token, json: { access_token_ttl: 3000 + this.statuses.length } })
  }
}

const sqlite = inject('dialects').includes('sqlite')

describe.runIf(sqlite)('several herald processes on one SQLite file', () => {
  let database: TestDatabase
  let receiver: Receiver
  const processes: HeraldProcess[] = []

  beforeAll(async () => {
    database = await createTestDatabase('sqlite')
    receiver = await Receiver.start(() => ({ status: 204 }))
  })
  afterAll(async () => {
    await Promise.all(processes.map(stop))
    await receiver?.close()
    await database?.drop()
  })

  it('migrates a new file once when several processes start on it at once', async () => {
    const fresh = await createTestDatabase('sqlite')
    try {
      const env = { DATABASE_URL: databaseUrl(fresh.config), HERALD_SECRET_KEY: randomBytes(32).toString('base64') }
      const runs = Array.from({ length: 4 }, () => spawnHerald('migrate', env))
      const codes = await Promise.all(runs.map(exited))
      expect(codes, runs.flatMap((run) => run.lines).join('\n')).toEqual([0, 0, 0, 0])
      // One applied the migrations; the others waited for it, and found nothing left to do.
      expect(runs.filter((run) => run.lines.some((line) => line.startsWith('Applied'))).length).toBe(1)
      expect(runs.filter((run) => run.lines.includes('The database is up to date')).length).toBe(3)
    } finally {
      await fresh.drop()
    }
  })

  it('two serves and a worker take mixed writes for 30 s without a single 5xx', async () => {
    const [first, second] = [`http://127.0.0.1:${await freePort()}`, `http://127.0.0.1:${await freePort()}`]
    const env = {
      DATABASE_URL: databaseUrl(database.config),
      HERALD_SECRET_KEY: randomBytes(32).toString('base64'),
      HERALD_OPERATOR_TOKEN: OPERATOR_TOKEN,
      ...LOCAL_DELIVERY.env,
      PUBLIC_URL: first,
      LOG_LEVEL: 'warn',
    }
    const serves = [first, second].map((origin) => spawnHerald('serve', { ...env, PORT: new URL(origin).port }))
    processes.push(...serves)
    // Both start at once on the new file: one migrates it while the other waits (see the test above).
    await ready(serves[0]!, first)
    await ready(serves[1]!, second)
    const worker = spawnHerald('worker', env)
    processes.push(worker)

    const account = await createAccount({ origin: first })
    await subscribedEndpoint(await webhookApi(account, new TestClock()), receiver.url, ['load.*'])
    const rp = await prepareSignIn(account, { grant_types: ['authorization_code', 'refresh_token'], scope: 'openid offline_access' })
    const lanes = await Promise.all(
      [first, second].flatMap((origin) => Array.from({ length: LANES_PER_SERVE }, (_, n) => WritingLane.start(through(account, origin), rp, `user-${origin}-${n}`))),
    )

    const until = Date.now() + LOAD_MS
    await Promise.all(lanes.map((lane) => lane.run(until)))

    const statuses = lanes.flatMap((lane) => lane.statuses)
    expect(lanes.flatMap((lane) => lane.failures)).toEqual([])
    // Writes went on all the while, on both serves: a few every second even on a slow machine.
    expect(statuses.length).toBeGreaterThan(LOAD_MS / 100)
    for (const lane of lanes) expect(lane.statuses.length).toBeGreaterThan(20)
    // Every process still runs, and the worker and the serves' own workers delivered meanwhile.
    expect(processes.filter((process) => !running(process)).map((process) => process.lines.join('\n'))).toEqual([])
    await eventually(() => receiver.requests.length > 0, 10_000, 'deliveries during the load')
  }, LOAD_MS + 60_000)
})
