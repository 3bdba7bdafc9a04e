// Token issuance: Herald's token endpoint against oidc-provider doing the same job (client_credentials,
// client_secret_basic, an ES256-signed RFC 9068 JWT access token for one resource and scope) and against a
// floor (a bare node:http handler that only authenticates and signs, a turn's tokens together as Herald does),
// each in its own process pinned to one core while autocannon drives it from this process on another core, over
// 127.0.0.1. Then Herald in-process, to count the database queries issuing a token costs.
//
//   npm run bench -- tokens              the comparison and the query count (about 2 minutes)
//   npm run bench -- tokens --profile    instead: one CPU-profiled load run of each, top self-time functions
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import {
  LOAD_CORE,
  ROOT,
  SERVER_CORE,
  basic,
  decodeJwt,
  formatMs,
  freePort,
  heraldEnv,
  load,
  mean,
  pinSelf,
  pinningAvailable,
  startHeraldInProcess,
  startNode,
  statementCounter,
  summarizeProfile,
  waitForHttp,
  waitForQuiet,
} from './support.mjs'

export const SCOPE = 'orders:read'
export const RESOURCE = 'https://api.example.com/orders'
const CONNECTIONS = 50
const WARMUP_SECONDS = 3
const ROUND_SECONDS = 10
const ROUNDS = 3
/** The in-process query count runs over two cache lifetimes, so the backstop reloads show up in it. */
const COUNT_SECONDS = 10
const COUNT_CONNECTIONS = 10
const START_TIMEOUT_MS = 15_000
const PROFILE_SECONDS = 10
/** Before each measured round, wait at most this long for the benchmark cores to be free of other work. */
const QUIET_WAIT_MS = 3000

export const USAGE = `Usage: npm run bench -- tokens [--profile]

  (no flag)   Herald vs oidc-provider vs a bare node:http floor, ${ROUNDS} alternating rounds of ${ROUND_SECONDS} s each after ${WARMUP_SECONDS} s warm-up,
              ${CONNECTIONS} connections; then database queries per issued token (Herald in-process)
  --profile   one ${PROFILE_SECONDS} s load run of each server under node --cpu-prof; prints the top self-time functions`

export async function main(args) {
  const unknown = args.filter((arg) => arg !== '--profile')
  if (unknown.length > 0) {
    console.error(`unknown argument: ${unknown.join(' ')}\n\n${USAGE}`)
    return 2
  }
  const pinned = pinSelf(LOAD_CORE)
  const work = mkdtempSync(path.join(tmpdir(), 'herald-bench-'))
  const profiling = args.includes('--profile')
  printEnvironment(pinned)
  try {
    if (profiling) await profile(work)
    else await compare(work)
    return 0
  } finally {
    if (!profiling) rmSync(work, { recursive: true, force: true })
  }
}

function printEnvironment(pinned) {
  const peerVersion = JSON.parse(readFileSync(path.join(ROOT, 'node_modules', 'oidc-provider', 'package.json'), 'utf8')).version
  console.log(`node ${process.version}, oidc-provider ${peerVersion}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}`)
  console.log(
    pinningAvailable() && pinned
      ? `servers pinned to core ${SERVER_CORE} (taskset), one at a time under load; autocannon on core ${LOAD_CORE}; 127.0.0.1`
      : 'taskset unavailable: servers and load generator are NOT pinned, figures are noisier',
  )
}

// ---------------------------------------------------------------------------------------------------------
// The comparison

async function compare(work) {
  const servers = []
  try {
    for (const start of [startHeraldProcess, startPeerProcess, startFloorProcess]) servers.push(await start(work))
    const targets = servers.map((server) => server.target)
    for (const target of targets) await checkSample(target)

    console.log(`\nwarm-up: ${WARMUP_SECONDS} s each`)
    for (const target of targets) await load({ ...target.request, label: `${target.name} warm-up`, connections: CONNECTIONS, seconds: WARMUP_SECONDS, pid: target.pid })

    console.log(`measuring: ${ROUNDS} rounds × ${ROUND_SECONDS} s each, alternating, ${CONNECTIONS} connections, pipelining 1`)
    const rounds = new Map(targets.map((target) => [target.name, []]))
    for (let round = 1; round <= ROUNDS; round++) {
      for (const target of targets) {
        const calm = await waitForQuiet(QUIET_WAIT_MS)
        if (calm && !calm.quiet) {
          console.log(`  (cores still busy with other processes before this round: core ${SERVER_CORE} ${cpuText(calm.shares[0])}, core ${LOAD_CORE} ${cpuText(calm.shares[1])})`)
        }
        const result = await load({ ...target.request, label: `${target.name} round ${round}`, connections: CONNECTIONS, seconds: ROUND_SECONDS, pid: target.pid })
        rounds.get(target.name).push(result)
        console.log(
          `  round ${round} ${target.name.padEnd(14)} ${result.rps.toFixed(0).padStart(7)} req/s  p50 ${formatMs(result.p50)} ms  p99 ${formatMs(result.p99)} ms  ` +
            `server CPU ${cpuText(result.serverCpu)} (${result.perCpuSecond?.toFixed(0) ?? 'n/a'} tokens/CPU-s)  ` +
            `others on core ${SERVER_CORE}: ${cpuText(result.othersOnServerCore)}, on core ${LOAD_CORE}: ${cpuText(result.othersOnLoadCore)}`,
        )
      }
    }
    printComparison(rounds)
  } finally {
    for (const server of servers) await server.stop()
  }
  await countQueries(work)
}

function printComparison(rounds) {
  console.log('\ntoken issuance (client_credentials, client_secret_basic, ES256 JWT access token):')
  console.log(`  ${'target'.padEnd(14)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'tokens/CPU-s'.padStart(13)}  rounds (req/s)`)
  const summary = new Map()
  let contended = 0
  for (const [name, results] of rounds) {
    const perCpu = results.every((r) => r.perCpuSecond !== undefined) ? mean(results.map((r) => r.perCpuSecond)) : undefined
    const row = { rps: mean(results.map((r) => r.rps)), p50: mean(results.map((r) => r.p50)), p99: mean(results.map((r) => r.p99)), perCpu }
    summary.set(name, row)
    contended = Math.max(contended, ...results.map((r) => Math.max(r.othersOnServerCore ?? 0, r.othersOnLoadCore ?? 0)))
    console.log(
      `  ${name.padEnd(14)} ${row.rps.toFixed(0).padStart(8)} ${formatMs(row.p50).padStart(8)} ${formatMs(row.p99).padStart(8)} ${(perCpu?.toFixed(0) ?? 'n/a').padStart(13)}  ${results.map((r) => r.rps.toFixed(0)).join(' / ')}`,
    )
  }
  const herald = summary.get('herald')
  const ratio = (other) =>
    `${(herald.rps / other.rps).toFixed(2)}× req/s` + (herald.perCpu && other.perCpu ? `, ${(herald.perCpu / other.perCpu).toFixed(2)}× tokens per CPU-second` : '')
  console.log(`  (req/s, p50, p99 and tokens per server CPU-second are means over the ${ROUNDS} rounds)`)
  console.log(`  ratio herald / oidc-provider: ${ratio(summary.get('oidc-provider'))}`)
  console.log(`  ratio herald / floor (bare node:http + node:crypto ES256): ${ratio(summary.get('floor'))}`)
  if (contended > 0.1) {
    console.log(
      `  WARNING: other processes used up to ${cpuText(contended)} of a benchmark core during a round; req/s and latency are disturbed ` +
        '(tokens per CPU-second much less so). Re-run on a quiet machine for the headline figure.',
    )
  }
}

function cpuText(value) {
  return value === undefined ? 'n/a' : `${(value * 100).toFixed(0)}%`
}

/** One request outside the measurement: 200, an ES256 `at+jwt` for the resource and scope, or the bench stops. */
async function checkSample(target) {
  const { url, headers, body } = target.request
  const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(5000) })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`${target.name}: sample token request answered ${response.status}: ${text}`)
  const json = JSON.parse(text)
  if (typeof json.access_token !== 'string') throw new Error(`${target.name}: sample response has no access_token: ${text}`)
  const { header, payload } = decodeJwt(json.access_token)
  const problems = []
  if (header.alg !== 'ES256') problems.push(`alg ${header.alg}`)
  if (header.typ !== 'at+jwt') problems.push(`typ ${header.typ}`)
  if (payload.aud !== RESOURCE) problems.push(`aud ${JSON.stringify(payload.aud)}`)
  if (payload.scope !== SCOPE) problems.push(`scope ${JSON.stringify(payload.scope)}`)
  if (problems.length > 0) throw new Error(`${target.name}: sample token is not the expected job: ${problems.join(', ')}`)
  console.log(`sample ${target.name.padEnd(14)} 200, ${header.alg} ${header.typ}, aud ${payload.aud}, scope ${payload.scope}, ${json.access_token.length} chars`)
}

// ---------------------------------------------------------------------------------------------------------
// The servers

function sqliteEnv(work, port, name) {
  return heraldEnv(port, `sqlite:${path.join(work, `${name}.db`)}`)
}

export async function startHeraldProcess(work, { nodeFlags = [] } = {}) {
  const port = await freePort()
  const env = sqliteEnv(work, port, 'herald')
  const proc = startNode('herald', [path.join(ROOT, 'dist', 'main.js'), 'serve'], { env, nodeFlags })
  const origin = `http://127.0.0.1:${port}`
  await waitForHttp(`${origin}/healthz`, START_TIMEOUT_MS, proc)
  const client = await provisionHerald(origin, env.HERALD_OPERATOR_TOKEN)
  return { target: heraldTarget(client, proc.pid), client, stop: () => proc.stop(), proc }
}

function heraldTarget(client, pid) {
  return {
    name: 'herald',
    pid,
    request: {
      url: client.tokenEndpoint,
      headers: { authorization: basic(client.clientId, client.clientSecret), 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=client_credentials&scope=${encodeURIComponent(SCOPE)}`,
    },
  }
}

/**
 * oidc-provider configured for the same job (bench/peers/oidc-provider.mjs). `env` adds to the peer's environment
 * (REDIRECT_URI enables the code flow); the answer's `ready` is the peer's readiness line, `client` its client.
 */
export function startPeerProcess(_work, options) {
  // oidc-provider issues a JWT only for a resource server: the resource indicator names it.
  return startScriptServer('oidc-provider', 'oidc-provider.mjs', `&resource=${encodeURIComponent(RESOURCE)}`, options)
}

/** The bare node:http + node:crypto handler (bench/peers/floor.mjs). */
export function startFloorProcess(_work, options) {
  return startScriptServer('floor', 'floor.mjs', '', options)
}

async function startScriptServer(name, script, extraBody, { nodeFlags = [], env: extraEnv = {} } = {}) {
  const port = await freePort()
  const clientId = 'bench-client'
  const clientSecret = randomBytes(32).toString('base64url')
  const env = { PORT: String(port), CLIENT_ID: clientId, CLIENT_SECRET: clientSecret, RESOURCE, SCOPE, DEBUG: '', ...extraEnv }
  const proc = startNode(name, [path.join(ROOT, 'bench', 'peers', script)], { env, nodeFlags })
  const ready = await proc.firstJsonLine(START_TIMEOUT_MS)
  const target = {
    name,
    pid: proc.pid,
    request: {
      url: ready.token_endpoint,
      headers: { authorization: basic(clientId, clientSecret), 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=client_credentials&scope=${encodeURIComponent(SCOPE)}${extraBody}`,
    },
  }
  return { target, ready, client: { clientId, clientSecret }, stop: () => proc.stop(), proc }
}

/**
 * Through Herald's own API, as an operator would: an account, a management token from its admin client, the
 * scope, and a machine client allowed it whose audience is the resource (so its tokens carry the same `aud`).
 */
async function provisionHerald(origin, operatorToken) {
  const created = await call('POST', `${origin}/accounts`, { authorization: `Bearer ${operatorToken}` }, { name: 'bench' }, 201)
  const { issuer } = created.account
  const admin = created.admin_client
  const tokenEndpoint = `${issuer}/oauth/tokens`
  const management = await call(
    'POST',
    tokenEndpoint,
    { authorization: basic(admin.client_id, admin.client_secret) },
    new URLSearchParams({ grant_type: 'client_credentials', scope: 'herald:scopes:write herald:clients:write' }),
    200,
  )
  const bearer = { authorization: `Bearer ${management.access_token}` }
  await call('POST', `${issuer}/oauth/scopes`, bearer, { name: SCOPE, description: 'Read orders (benchmark)' }, 201)
  const client = await call(
    'POST',
    `${issuer}/oauth/clients`,
    bearer,
    { client_name: 'bench', grant_types: ['client_credentials'], token_endpoint_auth_method: 'client_secret_basic', scope: SCOPE, audience: [RESOURCE] },
    201,
  )
  return { issuer, tokenEndpoint, clientId: client.client_id, clientSecret: client.client_secret, managementToken: management.access_token }
}

export async function call(method, url, headers, body, expected) {
  const form = body instanceof URLSearchParams
  const response = await fetch(url, {
    method,
    headers: { ...headers, 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json' },
    body: form ? body.toString() : JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  })
  const text = await response.text()
  if (response.status !== expected) throw new Error(`${method} ${url} answered ${response.status}, expected ${expected}: ${text}`)
  return JSON.parse(text)
}

// ---------------------------------------------------------------------------------------------------------
// Database queries per issued token

/**
 * Herald in-process (from dist/), with every SQL statement it runs counted (statementCounter). The count is checked
 * first against a request known to query (GET /readyz), so a broken hook can't report 0.
 */
async function countQueries(work) {
  const counter = await statementCounter()
  const dist = (file) => import(pathToFileURL(path.join(ROOT, 'dist', file)).href)
  const [{ CACHE_TTL_MS }, { REFRESH_AHEAD_SHARE }, { CHANGE_POLL_MS }] = await Promise.all([
    dist('herald.js'),
    dist('platform/cache/ttl-cache.js'),
    dist('platform/cache/change-feed.js'),
  ])
  const env = sqliteEnv(work, await freePort(), 'in-process')
  let herald
  try {
    herald = await startHeraldInProcess(env)
    const client = await provisionHerald(herald.origin, env.HERALD_OPERATOR_TOKEN)
    const target = heraldTarget(client, undefined)

    counter.start()
    const probe = await fetch(`${herald.origin}/readyz`)
    counter.stop()
    const probed = counter.total()
    if (probe.status !== 200 || probed < 1) throw new Error(`the query counter did not see GET /readyz's query (${probed} counted): refusing to report`)
    counter.statements.clear()

    await load({ ...target.request, label: 'herald in-process warm-up', connections: COUNT_CONNECTIONS, seconds: 2 })
    counter.start()
    const started = Date.now()
    const result = await load({ ...target.request, label: 'herald in-process', connections: COUNT_CONNECTIONS, seconds: COUNT_SECONDS })
    const windowMs = Date.now() - started
    counter.stop()

    const { statements } = counter
    const queries = counter.total()
    const tokens = result.ok
    // What the caches explain: the change log is read once per CHANGE_POLL_MS, and each cache entry (account, client,
    // settings, keys) in use reloads in the background once the refresh-ahead share of its lifetime has passed; one
    // more of each at either edge of the window.
    const refreshMs = CACHE_TTL_MS * REFRESH_AHEAD_SHARE
    const reloadsPerEntry = Math.ceil(windowMs / refreshMs) + 1
    const polls = Math.ceil(windowMs / CHANGE_POLL_MS) + 1
    const perRequest = [...statements].filter(([source, count]) => count > (source.includes('cache_changes') ? polls : reloadsPerEntry))
    console.log(`\ndatabase queries per issued token (Herald in-process, SQLite, ${(windowMs / 1000).toFixed(1)} s, ${COUNT_CONNECTIONS} connections):`)
    console.log(`  counter check: GET /readyz counted ${probed} statement(s)`)
    console.log(`  ${tokens} tokens issued, ${queries} SQL statements run: ${(queries / tokens).toFixed(6)} per token`)
    for (const [source, count] of [...statements].sort((a, b) => b[1] - a[1])) {
      console.log(`    ${String(count).padStart(6)} × ${source.replace(/\s+/g, ' ').slice(0, 110)}`)
    }
    if (perRequest.length > 0) {
      throw new Error(`queries grow with requests: ${perRequest.length} statement(s) ran more than the change log's ${polls} reads or the ${reloadsPerEntry} cache reloads a ${windowMs} ms window allows`)
    }
    console.log(
      queries === 0
        ? '  on the request path: 0 per token'
        : `  on the request path: 0 per token — every statement above is a read of the change log (one per ${CHANGE_POLL_MS / 1000} s) or a cache reload (at most ${reloadsPerEntry} per cached row in this window), not per request`,
    )
  } finally {
    counter.restore()
    await herald?.close()
  }
}

// ---------------------------------------------------------------------------------------------------------
// Profiles

async function profile(work) {
  for (const start of [startHeraldProcess, startPeerProcess, startFloorProcess]) {
    const dir = mkdtempSync(path.join(work, 'profile-'))
    const server = await start(work, { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${dir}`] })
    const { target } = server
    let result
    let window
    try {
      await checkSample(target)
      await load({ ...target.request, label: `${target.name} warm-up`, connections: CONNECTIONS, seconds: WARMUP_SECONDS, pid: target.pid })
      await waitForQuiet(QUIET_WAIT_MS)
      const fromUs = Number(process.hrtime.bigint() / 1000n)
      result = await load({ ...target.request, label: `${target.name} profiled`, connections: CONNECTIONS, seconds: PROFILE_SECONDS, pid: target.pid })
      window = { fromUs, toUs: Number(process.hrtime.bigint() / 1000n) }
    } finally {
      const exit = await server.stop(10_000)
      if (exit.code !== 0) console.log(`  (${target.name} exited with ${exit.code ?? exit.signal})`)
    }
    const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'))
    if (!file) throw new Error(`${target.name} wrote no .cpuprofile into ${dir}`)
    const summary = summarizeProfile(path.join(dir, file), { top: 30, window })
    if (summary.samples === 0) throw new Error(`no profile samples fall inside the load window: the clocks disagree (${path.join(dir, file)})`)
    const perToken = (micros) => (micros / result.ok).toFixed(1).padStart(6)
    console.log(
      `\n${target.name} under --cpu-prof: ${result.rps.toFixed(0)} req/s, p50 ${formatMs(result.p50)} ms, p99 ${formatMs(result.p99)} ms, ` +
        `server CPU ${cpuText(result.serverCpu)}, ${result.ok} tokens`,
    )
    console.log(`  profile: ${path.join(dir, file)}`)
    console.log(`  ${(summary.totalMicros / 1e6).toFixed(1)} s sampled inside the ${PROFILE_SECONDS} s load window = ${perToken(summary.totalMicros).trim()} µs per token (idle included)`)
    console.log('  self time by area:               share   µs/token')
    for (const area of summary.areas.slice(0, 12)) console.log(`    ${area.name.padEnd(30)} ${pct(area.share)}  ${perToken(area.micros)}`)
    console.log('  top self-time functions:         share   µs/token')
    for (const fn of summary.functions) console.log(`    ${pct(fn.share)}  ${perToken(fn.micros)}  ${fn.name}`)
  }
  console.log(`\nprofiles kept under ${work}`)
}

function pct(share) {
  return `${(share * 100).toFixed(1).padStart(5)}%`
}
