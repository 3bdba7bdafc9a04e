import { beforeAll, describe, expect, it } from 'vitest'
import { type FuzzCase, type FuzzClient, generateCase } from '../support/authorize-fuzz-cases.js'
import { type CreatedAccount, type TestHerald, forEachDialect, useHerald } from '../support/herald.js'
import { basicAuth, call, createAccount, managementToken } from '../support/http.js'
import { SeededRandom, testSeed } from '../support/seeded-random.js'
import { Browser, LoginApp, REDIRECT_URI } from '../support/sign-in.js'

const SEED = testSeed(35)
/** Each case goes to authorize and to PAR: 2,000 generated requests, and the pushed starts and logins they lead to. */
const CASES = 1000
const BATCH = 50
const PARALLEL = 8
const LOGIN = 'https://login.example/login'
const CONSENT = 'https://login.example/consent'
const ERROR = 'https://login.example/error'

/** The app URLs each fuzzed account has: every way a request can find the account's settings. */
const SETTINGS: ReadonlyArray<Partial<Record<'login_url' | 'consent_url' | 'error_url', string>>> = [
  { login_url: LOGIN, consent_url: CONSENT, error_url: ERROR },
  { login_url: LOGIN, consent_url: CONSENT },
  { login_url: LOGIN, error_url: ERROR },
  { login_url: LOGIN },
  { consent_url: CONSENT, error_url: ERROR },
  {},
]

const AUTHORIZE_CLIENT = { grant_types: ['authorization_code'], response_types: ['code'], scope: 'openid profile email' }
const CLIENTS: Record<string, Record<string, unknown>> = {
  web: { ...AUTHORIZE_CLIENT, redirect_uris: [REDIRECT_URI, 'https://rp.example/cb', 'http://localhost:9/cb'] },
  'web, first-party, no PKCE': { ...AUTHORIZE_CLIENT, redirect_uris: [REDIRECT_URI, 'https://rp.example/cb'], skip_consent: true, require_pkce: false },
  'native, public': { ...AUTHORIZE_CLIENT, application_type: 'native', token_endpoint_auth_method: 'none', redirect_uris: ['http://127.0.0.1/cb', 'http://[::1]:9/cb', 'com.example.app:/cb'] },
  'native, first-party, PAR only': {
    ...AUTHORIZE_CLIENT,
    application_type: 'native',
    token_endpoint_auth_method: 'client_secret_post',
    skip_consent: true,
    require_pushed_authorization_requests: true,
    redirect_uris: ['http://127.0.0.1:9/callback', 'com.example.app:/cb'],
  },
  'machine (client_credentials only)': { grant_types: ['client_credentials'] },
}

/** The tables a sign-in request may write; every other table is left alone by construction. */
const TABLES = ['authorization_flows', 'browser_sessions', 'consents', 'session_clients', 'refresh_tokens', 'logout_requests', 'events'] as const
type Counts = Record<(typeof TABLES)[number], number>

interface FuzzAccount {
  account: CreatedAccount
  settings: (typeof SETTINGS)[number]
  clients: FuzzClient[]
  app: LoginApp
}

/** A generated request and what the test decides for it beforehand, so parallel runs stay deterministic. */
interface Planned extends FuzzCase {
  target: FuzzAccount
  /** Accept the login and follow the browser back, when the request reaches the login app. */
  followLogin: boolean
  remember: boolean
}

/** What a batch answered that the rows must show. */
interface Tally {
  flows: number
  sessions: number
  /** `oauth.login.accepted`, one per login the login app accepted. */
  events: number
}

/** How often the run reached what it is here for. */
interface Coverage {
  /** Requests sent to Herald: the generated ones, and the pushed starts and logins they lead to. */
  requests: number
  login: number
  par: number
  loginFollowed: number
  skipConsentWithPromptConsentNoConsentUrl: number
  untrustedRedirects: number
  schemaRefusals: number
}

/** One case under way: what it wrote so far, and where its failures go. */
interface Step {
  planned: Planned
  tally: Tally
  fail: (what: string, request: string, answer: Answer) => void
  coverage: Coverage
}

/**
 * Authorize and PAR, fuzzed together with a seeded generator over redirect URIs, clients, prompts, PKCE and
 * the account's and clients' settings. Every answer is a 4xx, an OAuth error at a redirect_uri the client may use,
 * or the login app; rows appear only for a request that reached the login app (or a 201 from PAR), and a session
 * only for a login that went on to consent or a code. HERALD_TEST_SEED=<seed> replays a run.
 */
forEachDialect((dialect) => {
  const h = useHerald(dialect)
  const accounts: FuzzAccount[] = []
  const strangers: string[] = ['garbage', 'cli_', `cli_${'0'.repeat(26)}`]

  beforeAll(async () => {
    for (const [index, settings] of SETTINGS.entries()) accounts.push(await fuzzAccount(h.current, `fuzz-${index}`, settings))
    const token = await managementToken(accounts[0]!.account)
    const deleted = await call<{ client_id: string }>(`${accounts[0]!.account.base}/oauth/clients`, 'POST', { token, json: CLIENTS.web })
    expect((await call(`${accounts[0]!.account.base}/oauth/clients/${deleted.body.client_id}`, 'DELETE', { token })).status).toBe(204)
    // Another account's clients, with the same redirect URIs: they must be unknown here.
    const other = await fuzzAccount(h.current, 'fuzz-other', SETTINGS[0]!)
    strangers.push(deleted.body.client_id, ...other.clients.map((client) => client.id))
  })

  describe(`authorize and PAR, ${CASES} generated requests to each (seed ${SEED})`, () => {
    it('answer every one below 500, never redirect to an unverified URI, and write only the rows their answers call for', { timeout: 120_000 }, async () => {
      const rng = new SeededRandom(SEED)
      const failures: string[] = []
      const coverage: Coverage = { requests: 0, login: 0, par: 0, loginFollowed: 0, skipConsentWithPromptConsentNoConsentUrl: 0, untrustedRedirects: 0, schemaRefusals: 0 }
      for (let start = 0; start < CASES; start += BATCH) {
        const batch = Array.from({ length: BATCH }, (_, offset): Planned => {
          const target = rng.pick(accounts)
          const generated = generateCase(rng, start + offset, target.clients, strangers)
          return { ...generated, target, followLogin: rng.chance(0.5), remember: rng.chance(0.5) }
        })
        const before = await counts(h.current)
        const tallies = await inParallel(batch, (planned) => run(planned, failures, coverage))
        const expected = tallies.reduce((sum, tally) => ({ flows: sum.flows + tally.flows, sessions: sum.sessions + tally.sessions, events: sum.events + tally.events }))
        const after = await counts(h.current)
        const written = Object.fromEntries(TABLES.map((table) => [table, after[table] - before[table]]))
        const wanted = { ...Object.fromEntries(TABLES.map((table) => [table, 0])), authorization_flows: expected.flows, browser_sessions: expected.sessions, events: expected.events }
        if (JSON.stringify(written) !== JSON.stringify(wanted)) {
          failures.push(`cases ${start}–${start + BATCH - 1}: rows written ${JSON.stringify(written)}, the answers call for ${JSON.stringify(wanted)}`)
        }
      }
      const replay = `seed ${SEED} (replay: HERALD_TEST_SEED=${SEED})`
      expect(failures, `${failures.length} failures, ${replay}:\n${failures.slice(0, 20).join('\n')}`).toEqual([])
      const withoutConsentApp = accounts.filter(({ settings }) => settings.consent_url === undefined).map(({ account }) => account.id)
      const stranded = await h.current.herald.database.db.selectFrom('authorization_flows').select('id').where('account_id', 'in', withoutConsentApp).where('stage', '=', 'consent').execute()
      expect(stranded, `${replay}: flows waiting for a consent app their account does not have`).toEqual([])
      // The generator must reach what it is here for, or the run proves little.
      expect(Object.values(coverage).every((count) => count > 0) && coverage.requests >= 2 * CASES, `${replay}: coverage ${JSON.stringify(coverage)}`).toBe(true)
    })
  })

  /** One case through authorize and through PAR (and on, where it leads to the login app); answers what it wrote. */
  async function run(planned: Planned, failures: string[], coverage: Coverage): Promise<Tally> {
    const { target } = planned
    const fail = (what: string, request: string, answer: Answer) =>
      failures.push(`#${planned.index} ${what}: ${answer.status} ${answer.location ?? answer.text.slice(0, 200)}\n  ${request}\n  account ${JSON.stringify(target.settings)}, client ${planned.client?.label ?? planned.clientId}`)
    const step: Step = { planned, tally: { flows: 0, sessions: 0, events: 0 }, fail, coverage }
    coverage.requests += 2
    // A first-party client asking for consent where the account has no consent app: refused before anything is written.
    const prompts = planned.params.find(([name]) => name === 'prompt')?.[1]?.split(' ') ?? []
    if (planned.client?.skipConsent && prompts.includes('consent') && target.settings.consent_url === undefined && planned.trustedAtPar !== undefined) {
      coverage.skipConsentWithPromptConsentNoConsentUrl++
    }

    const url = `${target.account.base}/oauth/authorize?${new URLSearchParams(planned.params)}${planned.garbage}`
    const browser = new Browser()
    const answer = await browser.open(url)
    const verdict = judge(answer, target, planned.trustedAtAuthorize)
    if (verdict !== undefined) fail(verdict, `GET ${url}`, answer)
    if (planned.trustedAtAuthorize === undefined) coverage.untrustedRedirects++
    if (isSchemaRefusal(answer)) coverage.schemaRefusals++
    if (isLogin(answer)) {
      step.tally.flows++
      coverage.login++
      await followLogin(step, browser, answer)
    }

    const { body, headers } = parRequest(planned)
    const pushed = await call<{ request_uri?: string; error?: string }>(`${target.account.base}/oauth/par`, 'POST', { body, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } })
    const parAnswer = { status: pushed.status, location: null, text: pushed.text }
    if (pushed.status === 201) {
      step.tally.flows++
      coverage.par++
      if (planned.trustedAtPar === undefined || typeof pushed.body.request_uri !== 'string') fail('PAR accepted a request it must refuse', `POST /oauth/par ${body}`, parAnswer)
      else {
        const start = `${target.account.base}/oauth/authorize?${new URLSearchParams({ client_id: planned.clientId, request_uri: pushed.body.request_uri })}`
        const pushedBrowser = new Browser()
        coverage.requests++
        const started = await pushedBrowser.open(start)
        const pushedVerdict = judge(started, target, planned.trustedAtPar)
        if (pushedVerdict !== undefined) fail(`pushed: ${pushedVerdict}`, `GET ${start} after POST /oauth/par ${body}`, started)
        if (isLogin(started)) await followLogin(step, pushedBrowser, started)
      }
    } else if (pushed.status >= 500 || pushed.status < 400 || typeof pushed.body.error !== 'string') {
      fail('PAR answered neither 201 nor an OAuth error', `POST /oauth/par ${body}`, parAnswer)
    }
    return step.tally
  }

  /** Accepts the login (an `oauth.login.accepted` event) and follows the browser back to authorize. */
  async function followLogin({ planned, tally, fail, coverage }: Step, browser: Browser, answer: Answer): Promise<void> {
    if (!planned.followLogin) return
    coverage.loginFollowed++
    coverage.requests += 2
    const { target } = planned
    const prompt = planned.params.find(([name]) => name === 'prompt')?.[1] ?? ''
    const challenge = new URL(answer.location!).searchParams.get('login_challenge')!
    const accepted = await target.app.answer('login', challenge, 'accept', { subject: `user-${planned.index}`, remember: planned.remember })
    if (accepted.status !== 200) return fail('the login app could not accept the login', `POST login-requests/${challenge}/accept`, { status: accepted.status, location: null, text: accepted.text })
    tally.events++
    const back = await browser.open(accepted.body.redirect_to)
    if (back.status >= 500) fail('back from the login app', `GET ${accepted.body.redirect_to} (prompt "${prompt}")`, back)
    // A login that goes on to the consent app or to a code has started a session; any other answer must not have.
    const where = back.location ?? ''
    const toConsent = back.status === 302 && where.startsWith(`${CONSENT}?consent_challenge=`)
    const withCode = back.status === 302 ? new URL(where, 'http://unused.example').searchParams.has('code') : back.status === 200 && back.text.includes('name="code"')
    if (toConsent || withCode) tally.sessions++
  }

  /** The rows of the fuzzed accounts, table by table. */
  async function counts(herald: TestHerald): Promise<Counts> {
    const ids = accounts.map(({ account }) => account.id)
    const { db } = herald.herald.database
    const entries = await Promise.all(
      TABLES.map(async (table) => {
        const row = await db.selectFrom(table).select((eb) => eb.fn.countAll<number | string>().as('n')).where('account_id', 'in', ids).executeTakeFirstOrThrow()
        return [table, Number(row.n)] as const
      }),
    )
    return Object.fromEntries(entries) as Counts
  }
})

interface Answer {
  status: number
  location: string | null
  text: string
}

/**
 * A refusal by the route's schema (a repeated parameter, a NUL character), before any parameter is read: a plain 400
 * whatever the request names, since nothing in it has been checked yet.
 */
function isSchemaRefusal(answer: Answer): boolean {
  return answer.status === 400 && answer.location === null && answer.text.startsWith('invalid_request: querystring/')
}

function isLogin(answer: Answer): boolean {
  return answer.status === 302 && (answer.location ?? '').startsWith(`${LOGIN}?login_challenge=`)
}

/**
 * Why an answer to authorize is wrong, or undefined: below 500, and either the login app (the request was valid and
 * the account has one), an OAuth error at the one redirect_uri the client may use, or, when there is none, the
 * account's error page or a plain 400 (RFC 9700 §4.11: never a redirect to an unverified URI).
 */
function judge(answer: Answer, target: FuzzAccount, trusted: string | undefined): string | undefined {
  if (answer.status >= 500) return 'a server error'
  if (isSchemaRefusal(answer)) return undefined
  if (isLogin(answer)) return trusted === undefined ? 'sent an untrusted request to the login app' : undefined
  if (trusted === undefined) {
    if (target.settings.error_url !== undefined) return answer.status === 302 && (answer.location ?? '').startsWith(`${ERROR}?error=`) ? undefined : 'not at the error page'
    return answer.status === 400 && answer.location === null && /^[a-z_]+: /.test(answer.text) ? undefined : 'not a plain 400'
  }
  const formAction = /action="([^"]*)"/.exec(answer.text)?.[1]?.replaceAll('&amp;', '&')
  const location = answer.status === 302 ? answer.location : answer.status === 200 ? formAction : undefined
  if (location === undefined || location === null) return 'neither the login app nor the client'
  const sent = new URL(location)
  const expected = new URL(trusted)
  if (`${sent.origin}${sent.pathname}` !== `${expected.origin}${expected.pathname}`) return `redirected to ${location}, not to ${trusted}`
  if (answer.status === 302 && (sent.searchParams.get('iss') !== target.account.issuer || !sent.searchParams.has('error'))) return 'an error response without error and iss'
  return undefined
}

/** The PAR body: the case's parameters with the client's authentication (RFC 9126 §2.1) in place of client_id. */
function parRequest(planned: Planned): { body: string; headers: Record<string, string> } {
  const params = new URLSearchParams(planned.params.filter(([name]) => name !== 'client_id'))
  const headers: Record<string, string> = {}
  const secret = planned.rightCredentials ? (planned.client?.secret ?? 'not-the-secret') : 'not-the-secret'
  const method = planned.client?.authMethod ?? 'client_secret_basic'
  if (method === 'client_secret_basic') headers.authorization = basicAuth(planned.clientId, secret)
  else params.append('client_id', planned.clientId)
  if (method === 'client_secret_post') params.append('client_secret', secret)
  return { body: `${params}${planned.garbage}`, headers }
}

/** Runs `work` over `items`, `PARALLEL` at a time, answering the results in order. */
async function inParallel<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await work(items[index]!)
    }
  }
  await Promise.all(Array.from({ length: PARALLEL }, worker))
  return results
}

async function fuzzAccount(herald: TestHerald, name: string, settings: (typeof SETTINGS)[number]): Promise<FuzzAccount> {
  const account = await createAccount(herald, name)
  const token = await managementToken(account)
  if (Object.keys(settings).length > 0) expect((await call(`${account.base}/settings`, 'PATCH', { token, json: settings })).status).toBe(200)
  const clients: FuzzClient[] = []
  for (const [label, metadata] of Object.entries(CLIENTS)) {
    const created = await call<{ client_id: string; client_secret?: string }>(`${account.base}/oauth/clients`, 'POST', { token, json: { client_name: label, ...metadata } })
    expect(created.status, created.text).toBe(201)
    clients.push({
      label,
      id: created.body.client_id,
      secret: created.body.client_secret ?? null,
      authMethod: (metadata.token_endpoint_auth_method as FuzzClient['authMethod'] | undefined) ?? 'client_secret_basic',
      native: metadata.application_type === 'native',
      skipConsent: metadata.skip_consent === true,
      redirectUris: (metadata.redirect_uris as string[] | undefined) ?? [],
    })
  }
  return { account, settings, clients, app: await LoginApp.of(account) }
}
