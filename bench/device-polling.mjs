// Device polling (RFC 8628 §3.4-3.5): what a crowd of devices waiting for their users costs the server. 1,000 devices
// each hold a pending device code and poll the token endpoint every `interval` seconds (5), their starts spread over
// one interval, as devices switched on at random moments would be; each waits the interval after each answer, as
// RFC 8628 §3.5 asks. Herald (`dist/main.js serve`, pinned to one core) is measured over the polling window, after
// one interval of ramp-up and a warm-up: its CPU as a share of one core, beside the same process idle and answering
// as many requests that do no grant's work (GET /healthz; the token endpoint refusing an unsupported grant_type).
// On PostgreSQL the backends of Herald's own connections are counted too. Then Herald in-process on SQLite, with
// every SQL statement it runs counted, for the statements one poll costs.
//
//   npm run bench -- device-polling                          SQLite and PostgreSQL, 1,000 devices, 60 s each (about 8 minutes)
//   npm run bench -- device-polling --dialect sqlite --seconds 20 --devices 200
//   npm run bench -- device-polling --dialect sqlite --profile   Herald under --cpu-prof: where the polls' CPU goes
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { Agent } from 'undici'
import { createDatabase, percentile, provision, startHerald } from './deliveries.mjs'
import {
  LOAD_CORE,
  SERVER_CORE,
  cpuSeconds,
  cpuWindow,
  formatMs,
  freePort,
  heraldEnv,
  pinSelf,
  pinningAvailable,
  startHeraldInProcess,
  statementCounter,
  summarizeProfile,
} from './support.mjs'

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'
const DEFAULTS = { devices: 1000, seconds: 60, dialects: ['sqlite', 'postgres'] }
/** The issue's goal: the polling costs Herald under this share of one core. */
const TARGET_SHARE_OF_CORE = 0.05
/** The statement count: fewer devices for less time, enough for every device to poll a few times. */
const COUNT_DEVICES = 100
const COUNT_SECONDS = 12
const CONNECTIONS = 16
/** Herald idle before the devices poll, for what its background work costs. */
const IDLE_SECONDS = 20
/** Each floor's window, at most. */
const FLOOR_SECONDS = 20
/**
 * Each phase runs this long at its rate before it is measured: at 200 requests a second V8 takes tens of seconds to
 * optimize a path (a lone request then cost half as much again), and a server's devices poll for as long as it runs.
 */
const WARMUP_SECONDS = 20

export const USAGE = `Usage: npm run bench -- device-polling [--devices N] [--seconds N] [--dialect sqlite|postgres] [--profile]

  --devices N   devices polling at once, each with its own pending device code (default ${DEFAULTS.devices})
  --seconds N   the measured polling window, after one interval of ramp-up and ${WARMUP_SECONDS} s of warm-up (default ${DEFAULTS.seconds})
  --dialect D   one database only (default: both)
  --profile     Herald under node --cpu-prof: self time per function and area inside the polling window, in µs per poll

  Prints Herald's CPU while the devices poll, as a share of one core (goal < ${TARGET_SHARE_OF_CORE * 100}%), beside the same
  process idle and answering as many requests at the same rate that do no grant's work (the floors: GET /healthz, and the
  token endpoint refusing an unsupported grant_type); polls per second, their p50 / p99, the answers; then SQL
  statements per poll (in-process, SQLite).`

export async function main(args) {
  const options = parseArgs(args)
  if (!options) return 2
  const pinned = pinSelf(LOAD_CORE)
  console.log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}`)
  console.log(pinningAvailable() && pinned ? `Herald pinned to core ${SERVER_CORE}, the devices on core ${LOAD_CORE}; 127.0.0.1` : 'taskset unavailable: NOT pinned, figures are noisier')
  const work = mkdtempSync(path.join(tmpdir(), 'herald-bench-'))
  try {
    const results = []
    for (const dialect of options.dialects) {
      const result = await measure(work, dialect, options)
      if (result) results.push(result)
    }
    const count = await countStatements(work)
    printSummary(results, count, options)
    return results.every((result) => result.total < TARGET_SHARE_OF_CORE) ? 0 : 1
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

function parseArgs(args) {
  const options = { ...DEFAULTS }
  for (let i = 0; i < args.length; i++) {
    const [flag, value] = [args[i], args[i + 1]]
    if (flag === '--profile') {
      options.profile = true
      continue
    }
    if ((flag === '--devices' || flag === '--seconds') && Number.isInteger(Number(value)) && Number(value) > 0) options[flag.slice(2)] = Number(value)
    else if (flag === '--dialect' && (value === 'sqlite' || value === 'postgres')) options.dialects = [value]
    else {
      console.error(`bad argument: ${flag}${value === undefined ? '' : ` ${value}`}\n\n${USAGE}`)
      return undefined
    }
    i++
  }
  return options
}

/** One database: Herald idle, then polled by `options.devices` devices; its CPU (and PostgreSQL's backends') in each. */
async function measure(work, dialect, options) {
  const database = await createDatabase(dialect, work)
  if (!database) return undefined
  const http = new Agent({ connections: CONNECTIONS, keepAliveTimeout: 60_000 })
  const profileDir = options.profile ? mkdtempSync(path.join(work, `profile-${dialect}-`)) : undefined
  let herald
  let backends
  let result
  try {
    herald = await startHerald(database, profileDir)
    const crowd = await devicesOf(http, herald, options.devices)
    backends = await backendsOf(database)
    console.log(`\n${dialect}: ${crowd.requests.length} device codes pending (interval ${crowd.interval} s)${backends ? `, PostgreSQL backends of Herald's counted` : ''}`)

    // Idle first: what the process costs whatever the devices do (its background work).
    const idle = await window(herald.proc.pid, backends, () => sleep(Math.min(IDLE_SECONDS, options.seconds) * 1000))
    console.log(`  idle ${idle.seconds.toFixed(0)} s: Herald ${pct(idle.herald)} of a core${backends ? `, PostgreSQL ${pct(idle.database)}` : ''}`)

    const measured = (during) => window(herald.proc.pid, backends, during)
    // The floors: as many requests at the same rate that do no grant's work, so that what a lone request costs the
    // HTTP server and the framework (GET /healthz), and the token endpoint up to the grant (the same form from the
    // same public client, refused as an unsupported grant_type), stand beside what a poll costs.
    const floorSeconds = Math.min(FLOOR_SECONDS, options.seconds)
    const health = await pollCrowd(http, { ...crowd, requests: crowd.requests.map(() => ({ url: `${herald.origin}/healthz`, method: 'GET' })) }, floorSeconds, measured)
    report('GET /healthz', health, 'HTTP 200')
    const unsupported = crowd.requests.map((poll) => ({ ...poll, body: poll.body.replace(/^grant_type=[^&]*/, 'grant_type=unsupported') }))
    const tokenFloor = await pollCrowd(http, { ...crowd, requests: unsupported }, floorSeconds, measured)
    report('token endpoint, unsupported grant_type', tokenFloor, 'unsupported_grant_type')
    const polling = await pollCrowd(http, crowd, options.seconds, measured)
    report('polling', polling, 'authorization_pending')
    result = { dialect, idle, health, tokenFloor, polling, total: sharesOf(polling).total }
  } finally {
    await backends?.close()
    await herald?.proc.stop(10_000)
    await http.close()
    await database.drop()
  }
  if (profileDir) printProfile(profileDir, { 'GET /healthz': result.health, 'unsupported grant_type': result.tokenFloor, polling: result.polling })
  return result
}

/** One phase's line, after checking that every request got the answer expected. */
function report(label, phase, expected) {
  const answers = [...phase.answers].map(([answer, times]) => `${times} ${answer}`).join(', ')
  const { herald, database } = phase.cpu
  console.log(
    `  ${label}: ${phase.count} requests, ${(phase.count / phase.cpu.seconds).toFixed(1)}/s, p50 ${formatMs(phase.p50)} ms, p99 ${formatMs(phase.p99)} ms (${answers})\n` +
      `    Herald ${pct(herald)} of a core${database === undefined ? '' : `, PostgreSQL ${pct(database)}`}, ${sharesOf(phase).perRequest.toFixed(0)} µs of CPU per request; ` +
      `others on core ${SERVER_CORE}: ${pct(phase.cpu.othersOnServerCore)}`,
  )
  if (phase.answers.size !== 1 || !phase.answers.has(expected)) throw new Error(`${label}: every request should answer ${expected}: ${answers}`)
}

/** A phase's CPU, Herald's and its PostgreSQL backends', as a share of one core and per request. */
function sharesOf(phase) {
  const total = phase.cpu.herald + (phase.cpu.database ?? 0)
  return { total, perRequest: (total * phase.cpu.seconds * 1e6) / phase.count }
}

/** Where Herald's main thread spent each phase's window, per request (the process wrote its profile as it exited). */
function printProfile(dir, phases) {
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'))
  if (!file) throw new Error(`Herald wrote no .cpuprofile into ${dir}`)
  console.log(`  profile ${path.join(dir, file)}`)
  for (const [label, phase] of Object.entries(phases)) {
    const summary = summarizeProfile(path.join(dir, file), { top: 30, window: phase.cpu.window })
    const perRequest = (micros) => (micros / phase.count).toFixed(1).padStart(7)
    console.log(`  ${label}: ${(summary.totalMicros / 1e6).toFixed(1)} s sampled in the window, idle included; self time by area, µs per request:`)
    for (const area of summary.areas.slice(0, 12)) console.log(`    ${area.name.padEnd(34)} ${perRequest(area.micros)}`)
    console.log('  top self-time functions, µs per request:')
    for (const fn of summary.functions) console.log(`    ${perRequest(fn.micros)}  ${fn.name}`)
  }
}

/** An account, a public client allowed the device grant, and `count` device codes it asked for. */
async function devicesOf(http, herald, count) {
  const api = await provision(herald.origin, herald.operatorToken, 'herald:clients:write')
  const client = await api.call('POST', '/oauth/clients', { client_name: 'television', token_endpoint_auth_method: 'none', grant_types: [DEVICE_GRANT], response_types: [], redirect_uris: [], scope: 'openid' }, 201)
  const form = { 'content-type': 'application/x-www-form-urlencoded' }
  const codes = []
  let interval
  for (let i = 0; i < count; i++) {
    const answer = await send(http, { url: `${api.base}/oauth/device_authorization`, method: 'POST', headers: form, body: `client_id=${client.client_id}&scope=openid` })
    if (answer.status !== 200) throw new Error(`device authorization answered ${answer.status}: ${JSON.stringify(answer.json)}`)
    codes.push(answer.json.device_code)
    interval = answer.json.interval
  }
  const poll = (deviceCode) => ({
    url: `${api.base}/oauth/tokens`,
    method: 'POST',
    headers: form,
    body: new URLSearchParams({ grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: client.client_id }).toString(),
  })
  return { requests: codes.map(poll), interval }
}

/**
 * Every device sends its request from a moment spread over the first interval, and again `interval` seconds after
 * each answer, until the window (`seconds`, from the end of the first interval and the warm-up) closes. Answers and
 * latencies count inside the window only; `measured(during)` measures the window.
 */
async function pollCrowd(http, crowd, seconds, measured, warmupSeconds = WARMUP_SECONDS) {
  const intervalMs = crowd.interval * 1000
  const started = performance.now()
  const from = started + intervalMs + warmupSeconds * 1000
  const to = from + seconds * 1000
  const answers = new Map()
  const latencies = []
  const device = async (request, index) => {
    await sleep((index / crowd.requests.length) * intervalMs)
    while (performance.now() < to) {
      const sent = performance.now()
      const answer = await send(http, request)
      if (sent >= from) {
        const name = answer.json.error ?? `HTTP ${answer.status}`
        answers.set(name, (answers.get(name) ?? 0) + 1)
        latencies.push(performance.now() - sent)
      }
      await sleep(intervalMs)
    }
  }
  const polled = Promise.all(crowd.requests.map(device))
  await sleep(from - performance.now())
  const cpu = await measured(() => sleep(to - performance.now()))
  await polled
  return { cpu, answers, count: latencies.length, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) }
}

/** Herald's CPU (and its PostgreSQL backends') while `during` runs, in cores. */
async function window(pid, backends, during) {
  const cpu = cpuWindow(pid)
  const databaseBefore = await backends?.snapshot()
  const fromUs = Number(process.hrtime.bigint() / 1000n)
  await during()
  const { seconds, serverCpu, othersOnServerCore } = cpu.end()
  const database = backends && (await backends.cpuSecondsSince(databaseBefore)) / seconds
  // On the monotonic clock that V8's profiler shares (summarizeProfile).
  const window = { fromUs, toUs: Number(process.hrtime.bigint() / 1000n) }
  return { seconds, herald: serverCpu, database, othersOnServerCore, window }
}

/**
 * The PostgreSQL backends serving Herald's connections, so that the rest of the machine's PostgreSQL work (other
 * databases) stays out of the figure; undefined on SQLite, whose work is Herald's own. The pool closes idle
 * connections and opens new ones, so each reading lists the backends anew: one that ended within a window takes its
 * last ticks with it, one that began counts from nothing.
 */
async function backendsOf(database) {
  if (!database.url.startsWith('postgres')) return undefined
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  const snapshot = async () => {
    const { rows } = await client.query('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()')
    return new Map(rows.map(({ pid }) => [pid, cpuSeconds(pid) ?? 0]))
  }
  return {
    snapshot,
    async cpuSecondsSince(before) {
      let used = 0
      for (const [pid, seconds] of await snapshot()) used += seconds - (before.get(pid) ?? 0)
      return used
    },
    close: () => client.end(),
  }
}

async function send(http, { url, method, headers, body }) {
  const { origin, pathname } = new URL(url)
  const response = await http.request({ origin, path: pathname, method, headers, body, headersTimeout: 10_000, bodyTimeout: 10_000 })
  return { status: response.statusCode, json: await response.body.json() }
}

/**
 * Herald in-process on SQLite with every statement counted while COUNT_DEVICES devices poll: those that grow with the
 * polls are the poll's; the rest are the change log's reads and the caches' reloads.
 */
async function countStatements(work) {
  const database = await createDatabase('sqlite', work)
  const counter = await statementCounter()
  const http = new Agent({ connections: CONNECTIONS })
  const env = heraldEnv(await freePort(), database.url)
  let herald
  try {
    herald = await startHeraldInProcess(env)
    const crowd = await devicesOf(http, { origin: herald.origin, operatorToken: env.HERALD_OPERATOR_TOKEN }, COUNT_DEVICES)
    const { count: polls } = await pollCrowd(
      http,
      crowd,
      COUNT_SECONDS,
      async (during) => {
        counter.start()
        await during()
        counter.stop()
      },
      0,
    )
    const rows = [...counter.statements].map(([source, times]) => ({ source: source.replace(/\s+/g, ' '), times })).sort((a, b) => b.times - a.times)
    return { polls, total: counter.total(), rows }
  } finally {
    counter.restore()
    await herald?.close()
    await http.close()
    await database.drop()
  }
}

function printSummary(results, count, options) {
  console.log(`\ndevice polling: ${options.devices} devices, ${options.seconds} s measured, CPU as a share of one core (goal < ${pct(TARGET_SHARE_OF_CORE)}):`)
  const beside = (phase) => `${pct(sharesOf(phase).total)} (${sharesOf(phase).perRequest.toFixed(0)} µs each)`
  for (const { dialect, idle, health, tokenFloor, polling, total } of results) {
    const database = polling.cpu.database === undefined ? '' : ` + PostgreSQL ${pct(polling.cpu.database)}`
    const verdict = total < TARGET_SHARE_OF_CORE ? 'met' : 'NOT met'
    console.log(
      `  ${dialect.padEnd(8)} Herald ${pct(polling.cpu.herald)}${database} = ${pct(total)} at ${(polling.count / polling.cpu.seconds).toFixed(0)} polls/s, ${sharesOf(polling).perRequest.toFixed(0)} µs per poll: ${verdict}\n` +
        `           beside, at the same rate: GET /healthz ${beside(health)}, unsupported grant_type ${beside(tokenFloor)}; idle ${pct(idle.herald + (idle.database ?? 0))}`,
    )
  }
  console.log(`\nSQL statements while ${COUNT_DEVICES} devices polled for ${COUNT_SECONDS} s (Herald in-process, SQLite): ${count.polls} polls, ${count.total} statements`)
  for (const row of count.rows) console.log(`  ${String(row.times).padStart(6)} × ${row.source.slice(0, 140)}`)
}

function pct(share) {
  return share === undefined ? 'n/a' : `${(share * 100).toFixed(2)}%`
}
