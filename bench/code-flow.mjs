// Complete sign-ins per second: the authorization code flow with headless login and consent (issue 23), Herald on
// SQLite and on PostgreSQL (`herald serve` from dist/, pinned to one core) beside oidc-provider doing the same flow
// in the same run (in memory, as it is; pinned to the same core, one server under load at a time). This process is
// the browser, the account's login and consent app and the relying party at once, on the other core, over
// 127.0.0.1; each flow is a new browser (its own cookies), so every flow logs in and consents in full:
//
//   Herald (8 requests)   GET authorize (not followed: the 302 to login_url carries the login challenge, and sets
//                         the flow's cookie) → the app: GET login request, POST accept (a management token with
//                         herald:login, obtained once) → GET redirect_to (302 to consent_url) → the app: GET consent
//                         request, POST accept of the scopes asked for → GET redirect_to (302 to redirect_uri with the
//                         code) → POST token: authorization_code, PKCE S256, client_secret_basic
//   oidc-provider (6)     GET /auth (303 to its interaction) → GET /interaction/:uid, where its login app
//                         (bench/peers/oidc-provider.mjs) reads the interaction and finishes it with the login at once
//                         → GET /auth/:uid (303 to the consent interaction) → GET /interaction/:uid: consent, a Grant
//                         saved → GET /auth/:uid (303 to redirect_uri with the code) → POST /token, the same way.
//                         oidc-provider's app runs inside the provider, so reading and accepting an interaction is one
//                         request where Herald's headless app makes two over HTTP
//
// Both answer an ES256 JWT access token and an RS256 ID token. A fixed number of flows is kept in flight for a fixed
// time, in rounds alternating between the servers. Then Herald in-process on each database, with every SQL statement
// it runs counted, for the statements (and transactions) one flow costs, and which request of a flow runs which.
//
//   npm run bench -- code-flow                       both databases and the peer, about 3 minutes
//   npm run bench -- code-flow --seconds 5           shorter rounds (a smoke run)
//   npm run bench -- code-flow --dialect sqlite      one database
import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import path from 'node:path'
import { Agent } from 'undici'
import { createDatabase, percentile, provision, startHerald } from './deliveries.mjs'
import {
  LOAD_CORE,
  ROOT,
  SERVER_CORE,
  basic,
  cpuWindow,
  decodeJwt,
  formatMs,
  freePort,
  heraldEnv,
  pinSelf,
  pinningAvailable,
  startHeraldInProcess,
  statementCounter,
  waitForQuiet,
} from './support.mjs'
import { startPeerProcess } from './tokens.mjs'

export const DEFAULTS = { seconds: 10, concurrency: 24, dialects: ['sqlite', 'postgres'] }
export const ROUNDS = 3
export const WARMUP_SECONDS = 3
/** The statement count's window: long enough for hundreds of flows, short beside the caches' refresh. */
const COUNT_SECONDS = 5
const QUIET_WAIT_MS = 3000
const SCOPE = 'openid profile email'
/** The login app, consent app and relying party are this process: Herald redirects to these, nothing fetches them. */
const LOGIN_URL = 'http://127.0.0.1/login'
const CONSENT_URL = 'http://127.0.0.1/consent'
export const REDIRECT_URI = 'http://127.0.0.1/callback'
const GOALS = { sqlite: 1.5, postgres: 1 }
const REQUEST_TIMEOUT_MS = 10_000

export const USAGE = `Usage: npm run bench -- code-flow [--seconds N] [--concurrency N] [--dialect sqlite|postgres]

  (no flag)         complete sign-ins (authorize → login accept → consent accept → code → token) per second: Herald
                    on SQLite and on PostgreSQL beside oidc-provider, ${ROUNDS} alternating rounds of ${DEFAULTS.seconds} s after
                    ${WARMUP_SECONDS} s warm-up, ${DEFAULTS.concurrency} flows in flight; then SQL statements per flow (Herald in-process)
  --seconds N       each round's length (the warm-up and the count take at most that too)
  --concurrency N   flows in flight
  --dialect NAME    sqlite or postgres only
PostgreSQL: HERALD_BENCH_POSTGRES_URL, a fresh database per run, dropped after.`

/** The sign-in flow as a job for compare() and countStatements(): a target per server, each checked once. */
const SIGN_IN = {
  unit: 'flows',
  peerEnv: { REDIRECT_URI },
  herald: heraldTarget,
  peer: async (http, peer) => peerTarget(http, peer),
  check: (target) => checkSample(target),
}

export async function main(args) {
  const options = parseArgs(args, USAGE)
  if (typeof options === 'string') return 2
  printSetup('browser, login app, client')
  const work = mkdtempSync(path.join(tmpdir(), 'herald-bench-code-flow-'))
  try {
    const { rounds } = await compare(work, options, SIGN_IN)
    const counts = new Map()
    for (const dialect of options.dialects) counts.set(dialect, await countStatements(work, dialect, options, SIGN_IN))
    printSummary(rounds, counts, options)
    return 0
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

/** The machine, the peer's version and where each process runs; pins this process to the load core. */
export function printSetup(roles) {
  const pinned = pinSelf(LOAD_CORE)
  const peerVersion = JSON.parse(readFileSync(path.join(ROOT, 'node_modules', 'oidc-provider', 'package.json'), 'utf8')).version
  console.log(`node ${process.version}, oidc-provider ${peerVersion}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}`)
  console.log(
    pinningAvailable() && pinned
      ? `servers pinned to core ${SERVER_CORE}, one at a time under load; this process (${roles}) on core ${LOAD_CORE}; PostgreSQL unpinned; 127.0.0.1`
      : 'taskset unavailable: servers and load generator are NOT pinned, figures are noisier',
  )
}

/** --seconds, --concurrency and --dialect; a string (printed with `usage`) when the arguments are wrong. */
export function parseArgs(args, usage) {
  const options = { ...DEFAULTS }
  const wrong = (message) => {
    console.error(`${message}\n\n${usage}`)
    return message
  }
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    const name = arg.replace(/^--/, '').split('=')[0]
    const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : args[++i]
    if (name === 'dialect') {
      if (value !== 'sqlite' && value !== 'postgres') return wrong(`--dialect takes sqlite or postgres (got ${value})`)
      options.dialects = [value]
    } else if (name === 'seconds' || name === 'concurrency') {
      const number = Number(value)
      if (!Number.isInteger(number) || number < 1) return wrong(`--${name} takes a positive integer (got ${value})`)
      options[name] = number
    } else return wrong(`unknown argument: ${arg}`)
  }
  return options
}

// ---------------------------------------------------------------------------------------------------------
// The comparison

/**
 * Herald on each database and oidc-provider, up at once and measured one at a time in alternating rounds of `job`:
 * `job.herald(http, origin, operatorToken, name, extra)` and `job.peer(http, peer)` make a target whose `flow(worker)`
 * is one operation, checked once by `job.check`. Then, with the servers stopped, `job.floor(dialect, database)` on
 * each database, if the job has one. Answers the rounds by target name, and the floors by dialect.
 */
export async function compare(work, options, job) {
  const http = new Agent({ connections: options.concurrency + 2, keepAliveTimeout: 30_000 })
  const servers = []
  const databases = new Map()
  try {
    const peer = await startPeerProcess(work, { env: job.peerEnv })
    servers.push(peer)
    const targets = [await job.peer(http, peer)]
    for (const dialect of options.dialects) {
      const database = await createDatabase(dialect, work)
      if (!database) continue
      databases.set(dialect, database)
      const herald = await startHerald(database)
      servers.push(herald.proc)
      // Herald's targets first, in the order of the dialects, the peer last.
      targets.splice(targets.length - 1, 0, await job.herald(http, herald.origin, herald.operatorToken, `herald ${dialect}`, { pid: herald.proc.pid, database }))
    }
    for (const target of targets) await job.check(target)

    const warmup = Math.min(WARMUP_SECONDS, options.seconds)
    console.log(`\nwarm-up: ${warmup} s each`)
    for (const target of targets) await runFlows(target, { ...options, seconds: warmup })

    console.log(`measuring: ${ROUNDS} rounds × ${options.seconds} s each, alternating, ${options.concurrency} ${job.unit} in flight`)
    const rounds = new Map(targets.map((target) => [target.name, []]))
    for (let round = 1; round <= ROUNDS; round++) {
      for (const target of targets) {
        const calm = await waitForQuiet(QUIET_WAIT_MS)
        if (calm && !calm.quiet) console.log(`  (cores still busy with other processes before this round: core ${SERVER_CORE} ${pct(calm.shares[0])}, core ${LOAD_CORE} ${pct(calm.shares[1])})`)
        const result = await runFlows(target, options)
        rounds.get(target.name).push(result)
        console.log(
          `  round ${round} ${target.name.padEnd(16)} ${result.flowsPerSecond.toFixed(1).padStart(7)} ${job.unit}/s  p50 ${formatMs(result.p50)} ms  p99 ${formatMs(result.p99)} ms  ` +
            `server CPU ${pct(result.serverCpu)}${result.databaseCpu === undefined ? '' : `, PostgreSQL ${pct(result.databaseCpu)}`}  ` +
            `other processes: ${pct(result.others)} of a core`,
        )
      }
    }
    for (const server of servers) await server.stop()
    const floors = new Map()
    if (job.floor) for (const [dialect, database] of databases) floors.set(dialect, await job.floor(dialect, database, options))
    return { rounds, floors }
  } finally {
    for (const server of servers) await server.stop()
    for (const database of databases.values()) await database.drop()
    await http.close()
  }
}

/**
 * `concurrency` flows in flight for `seconds`: each worker (its index passed to `flow`) starts its next flow when its
 * last one has its tokens.
 * Any failed step stops the run: a figure with failed flows in it would be meaningless.
 */
export async function runFlows(target, { concurrency, seconds }) {
  const window = cpuWindow(target.pid)
  const databaseBefore = target.database?.serverCpuSeconds()
  const deadline = performance.now() + seconds * 1000
  const latencies = []
  let failure
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (failure === undefined && performance.now() < deadline) {
        const started = performance.now()
        try {
          await target.flow(worker)
        } catch (error) {
          failure ??= error
          return
        }
        latencies.push(performance.now() - started)
      }
    }),
  )
  const cpu = window.end()
  if (failure !== undefined) throw new Error(`${target.name}: a flow failed — refusing to report figures: ${failure.message}`)
  if (latencies.length === 0) throw new Error(`${target.name}: no flow completed in ${seconds} s`)
  const databaseAfter = target.database?.serverCpuSeconds()
  const databaseCpu = databaseBefore !== undefined && databaseAfter !== undefined ? (databaseAfter - databaseBefore) / cpu.seconds : undefined
  return {
    flows: latencies.length,
    flowsPerSecond: latencies.length / cpu.seconds,
    latencies,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    serverCpu: cpu.serverCpu,
    databaseCpu,
    // What else kept the two benchmark cores busy: PostgreSQL is unpinned and part of what is measured, so its CPU is
    // set aside (all of its processes', other clients' included).
    others:
      cpu.othersOnServerCore === undefined || cpu.othersOnLoadCore === undefined ? undefined : Math.max(0, cpu.othersOnServerCore + cpu.othersOnLoadCore - (databaseCpu ?? 0)),
  }
}

// ---------------------------------------------------------------------------------------------------------
// The flows

/**
 * Herald, through its API as an account's operator sets it up: the login and consent URLs, a confidential client
 * for the code flow, and one management token with herald:login that the login and consent app uses for every flow.
 * `request` changes what is asked: `client` adds to the client's registration, `scope` and `params` to the
 * authorization request.
 */
export async function heraldTarget(http, origin, operatorToken, name, { pid, database, request = {} } = {}) {
  const api = await provision(origin, operatorToken, 'herald:settings:write herald:clients:write herald:login')
  await api.call('PATCH', '/settings', { login_url: LOGIN_URL, consent_url: CONSENT_URL }, 200)
  const client = await api.call(
    'POST',
    '/oauth/clients',
    {
      client_name: 'bench',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: SCOPE,
      ...request.client,
    },
    201,
  )
  const issuer = api.base
  const bearer = { authorization: `Bearer ${api.token}` }
  const relyingParty = signIn(http, { ...request, issuer, authorize: `${issuer}/oauth/authorize`, token: `${issuer}/oauth/tokens`, clientId: client.client_id, clientSecret: client.client_secret })
  /** The login or consent app's two calls for one challenge: read the request, accept it with what `accept` makes of it. */
  const answer = async (kind, challenge, accept) => {
    const url = `${issuer}/oauth/${kind}-requests/${encodeURIComponent(challenge)}`
    const details = await send(http, url, { headers: bearer }, 200)
    const accepted = await send(http, `${url}/accept`, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: JSON.stringify(accept(details.json)) }, 200)
    return accepted.json.redirect_to
  }
  return {
    name,
    pid,
    database,
    requestsPerFlow: 8,
    issuer,
    clientId: client.client_id,
    refresh: relyingParty.refresh,
    async flow() {
      const { browser, start, finish } = relyingParty.begin()
      const login = await browser.follow(start)
      const afterLogin = await answer('login', challengeOf(login, LOGIN_URL, 'login_challenge'), (request) => ({ subject: request.oidc_context.login_hint }))
      const consent = await browser.follow(afterLogin)
      const afterConsent = await answer('consent', challengeOf(consent, CONSENT_URL, 'consent_challenge'), (request) => ({ grant_scope: request.requested_scope }))
      return finish(await browser.follow(afterConsent))
    },
  }
}

/** oidc-provider: its login and consent app answers each interaction as the browser arrives (bench/peers/oidc-provider.mjs). */
export function peerTarget(http, peer, request = {}) {
  const { ready, client } = peer
  const relyingParty = signIn(http, { ...request, issuer: ready.url, authorize: ready.authorization_endpoint, token: ready.token_endpoint, ...client })
  return {
    name: 'oidc-provider',
    pid: peer.target.pid,
    requestsPerFlow: 6,
    issuer: ready.url,
    clientId: client.clientId,
    refresh: relyingParty.refresh,
    async flow() {
      const { browser, start, finish } = relyingParty.begin()
      let location = await browser.follow(start)
      // To the login interaction and back, then to the consent interaction and back.
      for (let hop = 0; hop < 4; hop++) location = await browser.follow(location)
      return finish(location)
    },
  }
}

/**
 * The relying party's side of one sign-in: `begin()` makes a fresh browser and the authorization request (state,
 * nonce, PKCE S256, a new login_hint); `finish(location)` takes the code from the redirect to redirect_uri, checks
 * the state and issuer, and redeems it with client_secret_basic. It answers the token response.
 */
function signIn(http, { issuer, authorize, token, clientId, clientSecret, scope = SCOPE, params = {} }) {
  const credentials = basic(clientId, clientSecret)
  let users = 0
  const post = (body, expected) => send(http, token, { method: 'POST', headers: { authorization: credentials, 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString() }, expected)
  return {
    /** RFC 6749 §6 with client_secret_basic; `expected` as for send(). */
    refresh: (refreshToken, expected) => post(new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }), expected),
    begin() {
      const verifier = randomBytes(32).toString('base64url')
      const state = randomBytes(16).toString('base64url')
      const nonce = randomBytes(16).toString('base64url')
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: REDIRECT_URI,
        scope,
        ...params,
        state,
        nonce,
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
        login_hint: `user-${++users}`,
      })
      const browser = new Browser(http)
      return {
        browser,
        start: `${authorize}?${query}`,
        async finish(location) {
          const callback = new URL(location)
          if (`${callback.origin}${callback.pathname}` !== REDIRECT_URI) throw new Error(`expected the redirect to ${REDIRECT_URI}, got ${location}`)
          const { code, state: returned, iss, error } = Object.fromEntries(callback.searchParams)
          if (error !== undefined) throw new Error(`the authorization ended in ${location}`)
          if (returned !== state) throw new Error(`state ${returned} came back for ${state}`)
          // RFC 9207: both name themselves in the authorization response.
          if (iss !== issuer) throw new Error(`iss ${iss} in the authorization response, expected ${issuer}`)
          const body = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier })
          const answer = await post(body, 200)
          return { ...answer.json, nonce }
        },
      }
    },
  }
}

/**
 * A browser's part: it keeps the cookies it is given (by name, sent where their Path covers the request, dropped
 * when cleared) and follows one redirect per call, answering where it leads (not fetched).
 */
class Browser {
  constructor(http) {
    this.http = http
    this.cookies = new Map()
  }

  async follow(url) {
    const target = new URL(url)
    const cookie = [...this.cookies]
      .filter(([, { path: scope }]) => target.pathname.startsWith(scope))
      .map(([name, { value }]) => `${name}=${value}`)
      .join('; ')
    const response = await send(this.http, url, { headers: cookie ? { cookie } : {} })
    if (response.status !== 302 && response.status !== 303) throw new Error(`GET ${url} answered ${response.status}, not a redirect: ${response.text.slice(0, 300)}`)
    this.keep(response.headers['set-cookie'])
    return new URL(response.headers.location, url).href
  }

  keep(header) {
    for (const line of header === undefined ? [] : [header].flat()) {
      const [pair, ...attributes] = line.split(';')
      const name = pair.slice(0, pair.indexOf('=')).trim()
      const value = pair.slice(pair.indexOf('=') + 1).trim()
      const attribute = (key) => attributes.map((part) => part.trim()).find((part) => part.toLowerCase().startsWith(`${key}=`))?.slice(key.length + 1)
      const maxAge = attribute('max-age')
      const expires = attribute('expires')
      if (value === '' || (maxAge !== undefined && Number(maxAge) <= 0) || (expires !== undefined && Date.parse(expires) <= Date.now())) this.cookies.delete(name)
      else this.cookies.set(name, { value, path: attribute('path') ?? '/' })
    }
  }
}

/** The challenge from a redirect to the login or consent app. */
function challengeOf(location, app, parameter) {
  const url = new URL(location)
  const challenge = url.searchParams.get(parameter)
  if (`${url.origin}${url.pathname}` !== app || !challenge) throw new Error(`expected a redirect to ${app} with ${parameter}, got ${location}`)
  return challenge
}

/** One request, its body read; with `expected`, any other status fails with the answer, and the JSON is parsed. */
export async function send(http, url, { method = 'GET', headers = {}, body } = {}, expected) {
  const { origin, pathname, search } = new URL(url)
  const response = await http.request({ origin, path: `${pathname}${search}`, method, headers, body, headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: REQUEST_TIMEOUT_MS })
  const text = await response.body.text()
  if (expected !== undefined && response.statusCode !== expected) throw new Error(`${method} ${url} answered ${response.statusCode}, expected ${expected}: ${text.slice(0, 300)}`)
  return { status: response.statusCode, headers: response.headers, text, json: expected === undefined ? undefined : JSON.parse(text) }
}

/** One flow outside the measurement, its tokens checked: an ES256 at+jwt access token and an RS256 ID token for the flow. */
async function checkSample(target) {
  const answer = await target.flow()
  const problems = []
  if (String(answer.token_type).toLowerCase() !== 'bearer') problems.push(`token_type ${answer.token_type}`)
  const access = decodeJwt(answer.access_token)
  const id = decodeJwt(answer.id_token)
  if (access.header.alg !== 'ES256' || access.header.typ !== 'at+jwt') problems.push(`access token ${access.header.alg} ${access.header.typ}`)
  if (id.header.alg !== 'RS256') problems.push(`ID token ${id.header.alg}`)
  if (id.payload.nonce !== answer.nonce) problems.push('ID token without the nonce')
  if (id.payload.aud !== target.clientId && !(Array.isArray(id.payload.aud) && id.payload.aud.includes(target.clientId))) problems.push(`ID token aud ${JSON.stringify(id.payload.aud)}`)
  if (id.payload.iss !== target.issuer) problems.push(`ID token iss ${id.payload.iss}`)
  if (problems.length > 0) throw new Error(`${target.name}: the sample sign-in is not the expected job: ${problems.join(', ')}`)
  console.log(
    `sample ${target.name.padEnd(16)} ${target.requestsPerFlow} requests; access token ${access.header.alg} ${access.header.typ} aud ${JSON.stringify(access.payload.aud)} ` +
      `scope ${JSON.stringify(access.payload.scope ?? answer.scope)}; ID token ${id.header.alg}, sub ${id.payload.sub}`,
  )
}

// ---------------------------------------------------------------------------------------------------------
// SQL statements per flow

/**
 * Herald in-process on a fresh database, every statement it runs counted while `job`'s flows run for a few seconds
 * (after a checked sample, so caches are warm); only whole flows run inside the count. Then one flow alone, its
 * statements told apart by the request that ran them.
 */
export async function countStatements(work, dialect, options, job) {
  const database = await createDatabase(dialect, work)
  if (!database) return undefined
  const counter = await statementCounter()
  const agent = new Agent({ connections: options.concurrency + 2 })
  // Every request of the flows goes through here, so that the traced flow can see where each request starts.
  const hook = { observe: undefined }
  const http = {
    request(request) {
      hook.observe?.(request)
      return agent.request(request)
    },
  }
  let herald
  try {
    const env = heraldEnv(await freePort(), database.url)
    herald = await startHeraldInProcess(env)
    const target = await job.herald(http, herald.origin, env.HERALD_OPERATOR_TOKEN, `herald ${dialect} in-process`)
    await job.check(target)
    counter.start()
    const result = await runFlows(target, { concurrency: options.concurrency, seconds: Math.min(COUNT_SECONDS, options.seconds) })
    counter.stop()
    const flows = result.flows
    const rows = [...counter.statements].map(([source, times]) => ({ source: oneLine(source), times, perFlow: times / flows })).sort((a, b) => b.times - a.times)
    const transactions = rows.filter((row) => /^begin\b/i.test(row.source)).reduce((sum, row) => sum + row.times, 0)
    return { flows, total: counter.total(), rows, transactions, steps: await traceFlow(target, counter, hook) }
  } finally {
    counter.restore()
    await herald?.close()
    await agent.close()
    await database.drop()
  }
}

/**
 * One flow alone: the statements run between a request's start and the next one's are that request's (each answer
 * is read before the next request starts; a background read may rarely fall in).
 */
async function traceFlow(target, counter, hook) {
  const steps = []
  const close = () => {
    const step = steps.at(-1)
    if (step) step.statements = [...counter.statements].flatMap(([source, times]) => Array(times).fill(oneLine(source)))
    counter.statements.clear()
  }
  hook.observe = (request) => {
    close()
    steps.push({ label: stepLabel(request) })
  }
  counter.statements.clear()
  counter.start()
  try {
    await target.flow(0)
  } finally {
    counter.stop()
    close()
    hook.observe = undefined
  }
  return steps
}

/** `GET /oauth/login-requests/{challenge}`: the account's prefix and the secrets left out, the first parameter named. */
function stepLabel({ method, path: target }) {
  const [pathname, query] = target.split('?')
  const first = query?.split('=')[0]
  return `${method} ${pathname.replace(/^\/accounts\/[^/]+/, '').replace(/-requests\/[^/]+/, '-requests/{challenge}')}${first ? `?${first}=…` : ''}`
}

function oneLine(sql) {
  return sql.replace(/\s+/g, ' ').trim()
}

// ---------------------------------------------------------------------------------------------------------
// Reporting

/**
 * A target's rounds (runFlows() answers) together: flows per second over all of them, p50 and p99 of every flow,
 * the server's (and PostgreSQL's) CPU ms per flow, and the most other processes took of a core in any round.
 */
export function summarize(results) {
  const seconds = results.reduce((sum, r) => sum + r.flows / r.flowsPerSecond, 0)
  const flows = results.reduce((sum, r) => sum + r.flows, 0)
  const latencies = results.flatMap((r) => r.latencies)
  const cpuMs = (share) => (results.every((r) => r[share] !== undefined) ? (results.reduce((sum, r) => sum + r[share] * (r.flows / r.flowsPerSecond), 0) * 1000) / flows : undefined)
  return {
    flowsPerSecond: flows / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    cpuMs: cpuMs('serverCpu'),
    databaseMs: cpuMs('databaseCpu'),
    others: Math.max(0, ...results.map((r) => r.others ?? 0)),
  }
}

function printSummary(rounds, counts, options) {
  console.log(`\nsign-in flows (authorize → login accept → consent accept → code → token), ${options.concurrency} in flight, ${ROUNDS} rounds × ${options.seconds} s:`)
  console.log(`  ${'target'.padEnd(16)} ${'flows/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'server CPU ms/flow'.padStart(19)}  rounds (flows/s)`)
  const summary = new Map()
  let contended = 0
  for (const [name, results] of rounds) {
    const row = summarize(results)
    summary.set(name, row)
    contended = Math.max(contended, row.others)
    const cpu = row.cpuMs === undefined ? 'n/a' : `${row.cpuMs.toFixed(2)}${row.databaseMs === undefined ? '' : ` + PG ${row.databaseMs.toFixed(2)}`}`
    console.log(
      `  ${name.padEnd(16)} ${row.flowsPerSecond.toFixed(1).padStart(8)} ${formatMs(row.p50).padStart(8)} ${formatMs(row.p99).padStart(8)} ${cpu.padStart(19)}  ${results.map((r) => r.flowsPerSecond.toFixed(1)).join(' / ')}`,
    )
  }
  console.log(`  (flows/s over all rounds; p50 and p99 of every flow's time from authorize to tokens; PG: all PostgreSQL processes, other users' included)`)
  const peer = summary.get('oidc-provider')
  for (const dialect of options.dialects) {
    const herald = summary.get(`herald ${dialect}`)
    if (!herald) continue
    const ratio = herald.flowsPerSecond / peer.flowsPerSecond
    const perCpu = herald.cpuMs && peer.cpuMs ? `, ${(peer.cpuMs / herald.cpuMs).toFixed(2)}× flows per server CPU-second` : ''
    console.log(`  ratio herald ${dialect} / oidc-provider: ${ratio.toFixed(2)}× flows/s${perCpu} (goal ≥ ${GOALS[dialect]}×: ${ratio >= GOALS[dialect] ? 'met' : 'not met'})`)
  }
  console.log(
    '  (oidc-provider in memory, its default adapter; its login and consent app runs in its process — interactionDetails, then interactionFinished ' +
      "with the login and with a saved Grant — so a flow is 6 requests there, 8 through Herald's headless API)",
  )
  if (contended > 0.1) {
    console.log(`  WARNING: other processes used up to ${pct(contended)} of a core on the benchmark's two during a round; re-run on a quiet machine for the headline figure.`)
  }
  printStatements(counts, 'flow', options)
}

/** countStatements()'s answers, by dialect: per `unit` (one flow of the job), each statement's share, then one alone. */
export function printStatements(counts, unit, options) {
  for (const [dialect, count] of counts) {
    if (!count) continue
    console.log(`\nSQL statements per ${unit} (Herald in-process, ${dialect}, ${count.flows} ${unit}s, ${options.concurrency} in flight):`)
    console.log(`  ${(count.total / count.flows).toFixed(2)} per ${unit} (${count.total} statements), in ${(count.transactions / count.flows).toFixed(2)} transactions per ${unit}`)
    // Batched work (one statement for the flows of several requests) runs less than once per flow, as do the change
    // log's reads and cache refreshes, which don't follow the flows at all.
    for (const row of count.rows) console.log(`    ${row.perFlow.toFixed(3).padStart(7)} per ${unit} (${String(row.times).padStart(6)}×)  ${row.source.slice(0, 130)}`)
    console.log(`  one ${unit} alone, by request (${count.steps.reduce((sum, step) => sum + step.statements.length, 0)} statements):`)
    for (const step of count.steps) {
      console.log(`    ${step.label}: ${step.statements.length}`)
      for (const source of step.statements) console.log(`        ${source.slice(0, 120)}`)
    }
  }
}

export function pct(value) {
  return value === undefined ? 'n/a' : `${(value * 100).toFixed(0)}%`
}
