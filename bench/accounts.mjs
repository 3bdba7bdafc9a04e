// Many accounts: one Herald server with N accounts answers client_credentials and introspection with every request on
// one account, then with requests spread uniformly over all N, in interleaved rounds of the same run; the target is
// ≥ 0.8× the one-account rate (DESIGN.md, Processes and scale). The server's RSS is read after every round. Then
// another account's token latency at a fixed rate, in idle windows that alternate with windows as long in which
// accounts are created 8 at a time through the operator API (real key generation in the server), against the goal of
// a p99 while creating within 2× the idle one.
//
// The N accounts are made before the server starts, through Herald's own code in this process, on the same database:
// with every account's RSA key generated for real that would take minutes, so here the RSA key pair is made once and
// every account's RS256 key reuses it (each under its own kid, sealed for its own row). Nothing measured signs with it.
//
//   npm run bench -- accounts                                  10,000 accounts on SQLite and PostgreSQL
//   npm run bench -- accounts --accounts 2000 --dialect sqlite --create 200
//   npm run bench -- accounts --creation-only                  the creation phase alone, still beside 10,000 accounts
import crypto, { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import autocannon from 'autocannon'
import pg from 'pg'
import { Agent, fetch } from 'undici'
import { percentile } from './deliveries.mjs'
import { ROOT, formatMs, freePort, load, pinSelf, LOAD_CORE, startNode, summarizeProfile, waitForHttp } from './support.mjs'

const POSTGRES_ADMIN_URL = process.env.HERALD_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const SCOPE = 'herald:webhooks:read'
const CONNECTIONS = 50
const WARMUP_SECONDS = 5
const LEAD_IN_SECONDS = 3
const ROUND_SECONDS = 5
/**
 * Even: each pair's kinds take turns at going first (one account then spread, then spread then one account, …), so a
 * drift in a shared machine's speed over the run weighs on both alike, where a kind always measured second would bear
 * every slowdown.
 */
const ROUNDS = 6
/** The kinds compared, in pairs. */
const ORDERED_PAIRS = [
  ['tokens, one account', 'tokens, spread'],
  ['introspection, one account', 'introspection, spread'],
]
const SEED_CONCURRENCY = 8
const CREATE_CONCURRENCY = 8
/** The fixed request rate of the latency phases: well below saturation, so the p99 shows stalls, not queueing. */
const PROBE_RATE = 200
const CREATION_WINDOW_SECONDS = 10
const RSS_GOAL_MB = 250

export const USAGE = `Usage: npm run bench -- accounts [--accounts N] [--create N] [--dialect sqlite|postgres] [--creation-only] [--profile KIND]

  --accounts N   accounts the spread rounds use (default 10000)
  --create N     accounts created through the operator API in the latency phase (default 1000; 0 skips it)
  --dialect D    one dialect only
  --creation-only  only the creation phase's latency: no spread rounds
  --profile K    instead: one round of "tokens" or "introspection" spread over the accounts, or the "creation" phase,
                 under --cpu-prof (the server's main thread)`

export async function main(args) {
  const options = { accounts: 10_000, create: 1000, dialects: ['sqlite', 'postgres'], profile: undefined, creationOnly: false }
  for (let i = 0; i < args.length; i++) {
    const flag = args[i]
    if (flag === '--creation-only') {
      options.creationOnly = true
      continue
    }
    const value = args[++i]
    if (flag === '--accounts' && Number(value) >= 2) options.accounts = Number(value)
    else if (flag === '--create' && Number(value) >= 0) options.create = Number(value)
    else if (flag === '--dialect' && (value === 'sqlite' || value === 'postgres')) options.dialects = [value]
    else if (flag === '--profile' && ['tokens', 'introspection', 'creation'].includes(value)) options.profile = value
    else {
      console.error(`bad argument: ${flag} ${value ?? ''}\n\n${USAGE}`)
      return 2
    }
  }
  pinSelf(LOAD_CORE)
  console.log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}; ${options.accounts} accounts`)
  const seeding = await seedingHerald()
  const work = mkdtempSync(path.join(tmpdir(), 'herald-accounts-'))
  let failed = false
  try {
    for (const dialect of options.dialects) failed = !(await runDialect(dialect, options, seeding, work)) || failed
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  return failed ? 1 : 0
}

async function runDialect(dialect, options, seeding, work) {
  console.log(`\n== ${dialect}`)
  const database = await createDatabase(dialect, work)
  const env = serverEnv(database.url)
  const started = Date.now()
  const accounts = await seeding.seed(env, options.accounts)
  console.log(`seeded ${accounts.length} accounts in ${((Date.now() - started) / 1000).toFixed(0)} s`)
  const profileDir = options.profile && mkdtempSync(path.join(work, 'profile-'))
  const nodeFlags = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []
  const server = startNode('herald', [path.join(ROOT, 'dist', 'main.js'), 'serve'], { env, nodeFlags })
  try {
    await waitForHttp(`${env.PUBLIC_URL}/healthz`, 30_000, server)
    // The creation phase's probe is the first account; only the spread rounds and the profile need every token.
    const creationOnly = options.creationOnly || options.profile === 'creation'
    const withTokens = await issueTokens(env.PUBLIC_URL, creationOnly ? accounts.slice(0, 1) : accounts)
    if (options.profile === 'creation') return await profileCreation(env, withTokens[0], options.create, server, profileDir)
    if (profileDir) return await profileRound(env.PUBLIC_URL, withTokens, server, options.profile, profileDir)
    const rates = options.creationOnly ? undefined : await spreadRounds(env.PUBLIC_URL, withTokens, server.pid)
    const latency = options.create > 0 ? await creationLatency(env, withTokens[0], options.create, server.pid) : undefined
    return report(dialect, options, rates, latency)
  } finally {
    await server.stop()
    await database.drop()
  }
}

/**
 * A warm-up round of each kind, then ROUNDS rounds of each, paired as ORDERED_PAIRS says; RSS after each. The
 * warm-up takes every account's first request (its first verification of each token, its first signature with each
 * key) out of the measured rounds, which compare the steady state.
 */
async function spreadRounds(origin, accounts, pid) {
  // As many distinct tokens of the first account as there are accounts: one token would let every revocation check
  // of a batch collapse into one key, which the spread round's checks can't.
  const oneAccountTokens = await issueTokens(origin, Array.from({ length: accounts.length }, () => accounts[0]))
  const kinds = {
    'tokens, one account': requests(origin, [accounts[0]], tokenRequest),
    'tokens, spread': requests(origin, accounts, tokenRequest),
    'introspection, one account': requests(origin, oneAccountTokens, introspectionRequest),
    'introspection, spread': requests(origin, accounts, introspectionRequest),
  }
  // The two introspection rounds check 20,000 tokens between them, twice what the verified-token cache keeps by
  // default, so each round evicts the other's: each is to start with its own tokens verified, as the warm-up left them.
  const tokensOf = { 'introspection, one account': oneAccountTokens, 'introspection, spread': accounts }
  const rates = new Map(Object.keys(kinds).map((kind) => [kind, []]))
  for (const [kind, spec] of Object.entries(kinds)) await load({ label: `${kind} warm-up`, url: origin, ...spec, connections: CONNECTIONS, seconds: WARMUP_SECONDS, pid })
  let rssMb = 0
  for (let round = 1; round <= ROUNDS; round++) {
    for (const kind of ORDERED_PAIRS.flatMap((pair) => (round % 2 === 1 ? pair : [...pair].reverse()))) {
      const spec = kinds[kind]
      // A lead-in of this kind, unmeasured, comes first: the round before it was of another kind, and each round is
      // to measure its own kind's steady state.
      if (tokensOf[kind]) await introspectEach(origin, tokensOf[kind])
      await load({ label: `${kind} lead-in`, url: origin, ...spec, connections: CONNECTIONS, seconds: LEAD_IN_SECONDS, pid })
      const result = await load({ label: `${kind} ${round}`, url: origin, ...spec, connections: CONNECTIONS, seconds: ROUND_SECONDS, pid })
      const rss = rssOf(pid)
      rssMb = Math.max(rssMb, rss)
      rates.get(kind).push(result)
      console.log(`  round ${round} ${kind.padEnd(28)} ${result.rps.toFixed(0).padStart(7)} req/s  p99 ${formatMs(result.p99)} ms  RSS ${rss.toFixed(0)} MB`)
    }
  }
  return { rates, rssMb }
}

async function profileRound(origin, accounts, server, kind, dir) {
  const spec = requests(origin, accounts, kind === 'tokens' ? tokenRequest : introspectionRequest)
  // A round first, so that the profile shows the steady state rather than each account's first request.
  await load({ label: `${kind} warm-up`, url: origin, ...spec, connections: CONNECTIONS, seconds: ROUND_SECONDS, pid: server.pid })
  if (kind === 'introspection') await introspectEach(origin, accounts)
  const fromUs = nowUs()
  const result = await load({ label: `${kind} profiled`, url: origin, ...spec, connections: CONNECTIONS, seconds: ROUND_SECONDS, pid: server.pid })
  const window = { fromUs, toUs: nowUs() }
  const summary = await stopProfiled(server, dir, window)
  console.log(`${kind} spread under --cpu-prof: ${result.rps.toFixed(0)} req/s`)
  printProfile(summary)
  return true
}

async function profileCreation(env, probe, count, server, dir) {
  const latency = await creationLatency(env, probe, count, server.pid)
  const summary = await stopProfiled(server, dir, latency.window)
  console.log(`${count} accounts created under --cpu-prof (${latency.seconds.toFixed(0)} s), p99 idle ${formatMs(latency.idle.p99)} ms, while creating ${formatMs(latency.during.p99)} ms`)
  printProfile(summary)
  return true
}

/** Stops the server and summarizes its main thread's profile (a worker thread's file has a thread id other than 0). */
async function stopProfiled(server, dir, window) {
  await server.stop(10_000)
  const file = readdirSync(dir).find((name) => name.endsWith(`.${server.pid}.0.001.cpuprofile`))
  return summarizeProfile(path.join(dir, file), { top: 30, window })
}

function printProfile(summary) {
  for (const area of summary.areas.slice(0, 10)) console.log(`  ${(area.share * 100).toFixed(1).padStart(5)}%  ${area.name}`)
  for (const fn of summary.functions) console.log(`  ${(fn.share * 100).toFixed(1).padStart(5)}%  ${fn.name}`)
}

/** autocannon requests: each picks an account uniformly at random. */
function requests(origin, accounts, build) {
  return {
    requests: [
      {
        method: 'POST',
        setupRequest: (request) => ({ ...request, ...build(accounts[Math.floor(Math.random() * accounts.length)]) }),
      },
    ],
  }
}

function tokenRequest(account) {
  return { path: `${account.path}/oauth/tokens`, headers: account.headers, body: `grant_type=client_credentials&scope=${encodeURIComponent(SCOPE)}` }
}

function introspectionRequest(account) {
  return { path: `${account.path}/oauth/introspect`, headers: account.headers, body: `token=${account.token}` }
}

/** One token per entry (an account may come several times), to introspect; this also makes every account warm. */
function issueTokens(origin, accounts) {
  return eachOnce(origin, accounts, tokenRequest, (account, body) => ({ ...account, token: body.access_token }))
}

/** Introspects every entry's token once, so that the rounds measure verified tokens, not first verifications. */
async function introspectEach(origin, accounts) {
  await eachOnce(origin, accounts, introspectionRequest, (account, body) => {
    if (!body.active) throw new Error(`the token of ${account.path} is not active`)
  })
}

/**
 * Sends `build(entry)` once for each entry, 50 at a time, and answers what `read` makes of each 200 answer. Each
 * call has connections of its own: a socket kept from an earlier call may have been closed by the server since.
 */
async function eachOnce(origin, entries, build, read) {
  const dispatcher = new Agent({ connections: 50 })
  const results = []
  try {
    for (let i = 0; i < entries.length; i += 50) {
      results.push(
        ...(await Promise.all(
          entries.slice(i, i + 50).map(async (entry) => {
            const { path, headers, body } = build(entry)
            // autocannon writes the body's length into the headers object it was given, which the entry shares.
            const sent = Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'content-length'))
            const response = await fetch(`${origin}${path}`, { method: 'POST', headers: sent, body, dispatcher })
            const answer = await response.json()
            if (response.status !== 200) throw new Error(`${path}: ${response.status} ${JSON.stringify(answer)}`)
            return read(entry, answer)
          }),
        )),
      )
    }
  } finally {
    await dispatcher.close()
  }
  return results
}

/**
 * Another account's token latency at a fixed rate while `count` accounts are created 8 at a time, in windows of
 * CREATION_WINDOW_SECONDS that alternate with idle windows as long. One probe runs throughout, and each response
 * counts in the window it came back in. So the idle and the creating p99 sample the same stretch of the server's
 * life (its garbage collections, the database's checkpoints) in about as many requests each, where one idle window
 * before the creation would set a few seconds against minutes. `window` lists the creating windows, for the profile.
 */
async function creationLatency(env, probe, count, pid) {
  const latencies = { idle: [], creating: [] }
  let phase = 'idle'
  let probing
  const running = new Promise((resolve, reject) => {
    probing = autocannon(
      { url: env.PUBLIC_URL, method: 'POST', connections: 10, overallRate: PROBE_RATE, pipelining: 1, timeout: 10, duration: 3600, ...requests(env.PUBLIC_URL, [probe], tokenRequest) },
      (error, result) => {
        if (error) return reject(error)
        if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) return reject(new Error(`fixed-rate probe: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`))
        resolve()
      },
    )
    probing.on('response', (_client, _status, _bytes, responseTime) => latencies[phase].push(responseTime))
  })
  const window = []
  let created = 0
  let creatingSeconds = 0
  while (created < count) {
    phase = 'idle'
    await new Promise((resolve) => setTimeout(resolve, CREATION_WINDOW_SECONDS * 1000))
    phase = 'creating'
    const fromUs = nowUs()
    const closesAt = Date.now() + CREATION_WINDOW_SECONDS * 1000
    // The window closes to new creations on time; those under way finish in it.
    await Promise.all(
      Array.from({ length: CREATE_CONCURRENCY }, async () => {
        while (created < count && Date.now() < closesAt) {
          created++
          await createAccount(env)
        }
      }),
    )
    window.push({ fromUs, toUs: nowUs() })
    creatingSeconds += (window.at(-1).toUs - fromUs) / 1e6
  }
  probing.stop()
  await running
  const p99 = (values) => ({ p99: percentile(values, 0.99), requests: values.length })
  return { idle: p99(latencies.idle), during: p99(latencies.creating), created, seconds: creatingSeconds, rssMb: rssOf(pid), window }
}

async function createAccount(env) {
  const response = await fetch(`${env.PUBLIC_URL}/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.HERALD_OPERATOR_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'created under load' }),
  })
  if (response.status !== 201) throw new Error(`account creation answered ${response.status}: ${await response.text()}`)
}

/** The monotonic clock in µs, which V8's profiler shares (see summarizeProfile). */
function nowUs() {
  return Number(process.hrtime.bigint() / 1000n)
}

function report(dialect, options, rounds, latency) {
  const met = (ok) => (ok ? 'met' : 'MISSED')
  let ok = true
  if (rounds) {
    const { rates, rssMb } = rounds
    const mean = (results) => results.reduce((sum, r) => sum + r.rps, 0) / results.length
    const rate = (kind) => mean(rates.get(kind))
    const tokens = rate('tokens, spread') / rate('tokens, one account')
    const introspection = rate('introspection, spread') / rate('introspection, one account')
    console.log(`\n${dialect}, ${options.accounts} accounts (means of ${ROUNDS} rounds of ${ROUND_SECONDS} s, ${CONNECTIONS} connections):`)
    for (const kind of rates.keys()) console.log(`  ${kind.padEnd(28)} ${rate(kind).toFixed(0).padStart(7)} req/s`)
    console.log(`  tokens spread / one account:        ${tokens.toFixed(2)}×  (goal ≥ 0.80×: ${met(tokens >= 0.8)})`)
    console.log(`  introspection spread / one account: ${introspection.toFixed(2)}×  (goal ≥ 0.80×: ${met(introspection >= 0.8)})`)
    console.log(`  server RSS, highest after a round:  ${rssMb.toFixed(0)} MB  (goal < ${RSS_GOAL_MB} MB: ${met(rssMb < RSS_GOAL_MB)})`)
    ok = tokens >= 0.8 && introspection >= 0.8 && rssMb < RSS_GOAL_MB
  } else {
    console.log(`\n${dialect}, ${options.accounts} accounts:`)
  }
  if (latency) {
    const ratio = latency.during.p99 / latency.idle.p99
    console.log(
      `  another account's token p99 at ${PROBE_RATE} req/s: idle ${formatMs(latency.idle.p99)} ms (${latency.idle.requests} requests), ` +
        `while ${latency.created} accounts were created ${CREATE_CONCURRENCY} at a time (${latency.window.length} windows, ${latency.seconds.toFixed(0)} s, ` +
        `${(latency.created / latency.seconds).toFixed(1)}/s) ${formatMs(latency.during.p99)} ms (${latency.during.requests}): ` +
        `${ratio.toFixed(2)}×  (goal ≤ 2×: ${met(ratio <= 2)}); RSS after ${latency.rssMb.toFixed(0)} MB`,
    )
    ok = ok && ratio <= 2
  }
  return ok
}

function rssOf(pid) {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) / 1024 : NaN
}

function serverEnv(databaseUrl) {
  return {
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    HERALD_SECRET_KEY: randomBytes(32).toString('base64'),
    HERALD_OPERATOR_TOKEN: randomBytes(32).toString('base64url'),
    LOG_LEVEL: 'silent',
    NODE_ENV: '',
  }
}

async function createDatabase(dialect, work) {
  if (dialect === 'sqlite') {
    const file = path.join(work, 'accounts.db')
    return { url: `sqlite:${file}`, drop: async () => rmSync(file, { force: true }) }
  }
  const name = `herald_bench_accounts_${process.pid}`
  const admin = async (text) => {
    const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL })
    await client.connect()
    try {
      await client.query(text)
    } finally {
      await client.end()
    }
  }
  await admin(`drop database if exists ${name}`)
  await admin(`create database ${name}`)
  const url = new URL(POSTGRES_ADMIN_URL)
  url.pathname = `/${name}`
  return { url: url.toString(), drop: () => admin(`drop database if exists ${name} with (force)`) }
}

/**
 * Herald's own modules in this process. Their key generation is replaced on the seeding instance: each account's
 * ES256 key is made for real, and its RS256 key is the pair made here (see the top of this file) under its own kid.
 */
async function seedingHerald() {
  const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 })
  const rsaJwk = rsa.publicKey.export({ format: 'jwk' })
  const rsaPem = rsa.privateKey.export({ format: 'pem', type: 'pkcs8' })
  const dist = (file) => import(pathToFileURL(path.join(ROOT, 'dist', file)).href)
  const [{ openHerald }, { loadConfig }, { createLogger }, { generateSigningKey }, { newId }] = await Promise.all(
    ['herald.js', 'platform/config.js', 'platform/logger.js', 'platform/keys/material.js', 'platform/ids.js'].map(dist),
  )
  const generate = async () => {
    const now = Date.now()
    const [es256, rs256] = [newId('key', now), newId('key', now)]
    return [
      { kid: es256, alg: 'ES256', ...(await generateSigningKey(es256, 'ES256')) },
      { kid: rs256, alg: 'RS256', publicJwk: { ...rsaJwk, kid: rs256, alg: 'RS256', use: 'sig' }, privatePem: rsaPem },
    ]
  }
  return {
    async seed(env, count) {
      const port = await freePort()
      Object.assign(env, { PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` })
      const herald = await openHerald({ config: loadConfig(env), log: createLogger('silent') })
      herald.keys.generate = generate
      try {
        const accounts = []
        let next = 0
        await Promise.all(
          Array.from({ length: SEED_CONCURRENCY }, async () => {
            while (next < count) {
              next++
              const { account, admin_client: admin } = await herald.accounts.create('bench')
              const basic = Buffer.from(`${encodeURIComponent(admin.client_id)}:${encodeURIComponent(admin.client_secret)}`).toString('base64')
              accounts.push({
                path: new URL(account.issuer).pathname,
                headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
              })
            }
          }),
        )
        return accounts
      } finally {
        await herald.close()
      }
    },
  }
}
