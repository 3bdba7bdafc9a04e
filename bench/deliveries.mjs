// Webhook delivery, on SQLite and on PostgreSQL in one run: Herald (`herald serve`, API and delivery worker in
// one process, pinned to one core) delivering to a bare node:http receiver that answers 204 at once (its own
// process, on the other core, beside this load generator). Per dialect:
//
//   drain       after a warm-up (deliveries to another endpoint, so the delivery path is compiled and its
//               connections open), N events published while the endpoint is disabled (their deliveries `held`),
//               then made due in one statement on the database (the queue loaded), and the endpoint enabled;
//               time from the enable's answer until all N deliveries are `succeeded` in the database (progress
//               is watched at the receiver, the database asked once all N have arrived). Three rounds (one
//               with --quick), each right after a round of the undici floor, so that each drain is compared
//               with the floor of the same minute: the machine's speed drifts more between minutes than within
//               one. The round with the median ratio stands for the run. Later rounds, and the phases after
//               them, run on a database that already holds the earlier rounds' rows
//   publish     autocannon POSTing /webhooks/events (endpoint disabled: each publish stores an event and a held
//               delivery, and nothing is sent), req/s, p50, p99
//   delete      that endpoint deleted with the publishes' held deliveries: the request's time, then the time
//               until the workers' sweep has cancelled the last of them (the latency phase waits for it)
//   latency     publishes at a steady 1,000 events/s to an active endpoint; publish-to-receive time of each
//               event (send of the publish here to arrival of its webhook-id at the receiver, one clock)
//   floors      undici straight to the receiver (bench/peers/http-floor.mjs, the same body shape as the worker's,
//               with as many requests in flight as makes it fastest, from Herald's core, Herald idle), in rounds
//               with the drain's; bare batched writes of the drain's rows (claim and completion, 500 per batch)
//               and bare single-row publish transactions, with better-sqlite3 and pg on the same database, from
//               this process
//
// Before each measured phase the database checkpoints (CHECKPOINT; SQLite's passive wal_checkpoint), so that no
// phase pays for writing back what an earlier one logged.
//
//   npm run bench -- deliveries                   both dialects, about 3 minutes
//   npm run bench -- deliveries --quick           a smoke run: small N, short phases (about 1 minute)
//   npm run bench -- deliveries --dialect sqlite  one dialect only (sqlite or postgres)
//   npm run bench -- deliveries --profile         the same run with Herald under --cpu-prof: top self-time
//                                                 functions of the drain and the publish phases
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import SQLite from 'better-sqlite3'
import pg from 'pg'
import { Webhook } from 'standardwebhooks'
import { Pool } from 'undici'
import {
  LOAD_CORE,
  ROOT,
  SERVER_CORE,
  basic,
  cpuSecondsOfCommand,
  cpuWindow,
  formatMs,
  freePort,
  heraldEnv,
  load,
  pinSelf,
  pinningAvailable,
  startNode,
  summarizeProfile,
  waitForHttp,
  waitForQuiet,
} from './support.mjs'

const POSTGRES_ADMIN_URL = process.env.HERALD_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const START_TIMEOUT_MS = 20_000
const QUIET_WAIT_MS = 3000
/**
 * The drain endpoint's max_in_flight: the window of the worker, whose HERALD_WEBHOOK_CONCURRENCY the bench leaves at
 * its default (512), so that neither cap is the tighter one.
 */
const MAX_IN_FLIGHT = 512
/**
 * The undici floor's requests in flight: fewer than Herald's, because undici is fastest here at 256. In four
 * interleaved pairs of 4-second runs it measured 34,311–35,246 req/s at 256 and 26,130–31,032 at 512: measured at
 * Herald's own window, the floor would be lower and the drain's ratio to it higher.
 */
const FLOOR_IN_FLIGHT = 256
const PUBLISH_CONNECTIONS = 50
const PRELOAD_CONNECTIONS = 32
const LATENCY_RATE = 1000
/** Publishes awaiting an answer in the latency phase past which the schedule skips (Herald can't keep up). */
const MAX_OUTSTANDING = 1000
const PUBLISH_TIMEOUT_MS = 30_000
const FLOOR_BATCH = 500
/** Connections the single-row publish floor uses on PostgreSQL: Herald's pool size. */
const PG_POOL = 10

const GOALS = { drainPerSecond: 20_000, drainShareOfHttpFloor: 0.4, publishPostgres: 5000, latencyP99Ms: 100 }

const FULL = { events: 20_000, drainRounds: 3, warmupDeliveries: 5000, drainTimeoutS: 120, publishWarmupS: 3, publishS: 10, latencyS: 10, httpFloorS: 3, txFloorS: 3 }
const QUICK = { quick: true, events: 2000, drainRounds: 1, warmupDeliveries: 500, drainTimeoutS: 30, publishWarmupS: 1, publishS: 3, latencyS: 3, httpFloorS: 2, txFloorS: 1 }

export const USAGE = `Usage: npm run bench -- deliveries [--quick] [--dialect sqlite|postgres] [--events N] [--profile]

  (no flag)         on SQLite and on PostgreSQL: ${FULL.drainRounds} drains of ${FULL.events} queued deliveries, each after a round of the
                    undici floor, publish API rate (autocannon, ${FULL.publishS} s,
                    ${PUBLISH_CONNECTIONS} connections), the delete of an endpoint with the publishes' held deliveries,
                    publish-to-receive latency at ${LATENCY_RATE} events/s for ${FULL.latencyS} s, and the floors
                    (undici straight to the receiver; bare batched writes; bare single-row publish transactions)
  --quick           a smoke run: ${QUICK.events} deliveries, ${QUICK.publishS} s phases
  --dialect NAME    sqlite or postgres only
  --events N        deliveries in the drain (and rows in the batched-write floor) instead of ${FULL.events}
  --profile         Herald runs under node --cpu-prof (figures a little lower); prints the top self-time functions
                    of the drain and publish phases and keeps the profiles
PostgreSQL: ${POSTGRES_ADMIN_URL} (HERALD_BENCH_POSTGRES_URL), a fresh database per run, dropped after.`

export async function main(args) {
  const options = parseArgs(args)
  if (typeof options === 'string') {
    console.error(`${options}\n\n${USAGE}`)
    return 2
  }
  const pinned = pinSelf(LOAD_CORE)
  const work = mkdtempSync(path.join(tmpdir(), 'herald-bench-deliveries-'))
  const plan = { ...(options.quick ? QUICK : FULL), ...(options.events && { events: options.events }) }
  console.log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}${options.quick ? ', --quick' : ''}${options.profile ? ', --profile' : ''}`)
  console.log(
    pinningAvailable() && pinned
      ? `Herald and the HTTP floor pinned to core ${SERVER_CORE}; receiver and this load generator on core ${LOAD_CORE}; PostgreSQL unpinned; 127.0.0.1`
      : 'taskset unavailable: nothing is pinned, figures are noisier',
  )
  const receiver = startNode('receiver', [path.join(ROOT, 'bench', 'peers', 'webhook-receiver.mjs')], { core: LOAD_CORE, env: { PORT: '0' } })
  const results = new Map()
  try {
    const { port } = await receiver.firstJsonLine(START_TIMEOUT_MS)
    const receiverOrigin = `http://127.0.0.1:${port}`
    for (const dialect of options.dialects) {
      console.log(`\n== ${dialect} ==`)
      const database = await createDatabase(dialect, work)
      if (!database) {
        results.set(dialect, { skipped: true })
        continue
      }
      try {
        results.set(dialect, await runDialect({ dialect, database, receiverOrigin, plan, work, profile: options.profile }))
      } finally {
        await database.drop()
      }
    }
  } finally {
    await receiver.stop()
    if (!options.profile) rmSync(work, { recursive: true, force: true })
    else console.log(`\nprofiles kept under ${work}`)
  }
  printTable(results, plan)
  return 0
}

function parseArgs(args) {
  const options = { quick: false, profile: false, dialects: ['sqlite', 'postgres'] }
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    if (arg === '--quick') options.quick = true
    else if (arg === '--events' || arg.startsWith('--events=')) {
      const value = Number(arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : args[++i])
      if (!Number.isInteger(value) || value < FLOOR_BATCH) return `--events takes an integer ≥ ${FLOOR_BATCH}`
      options.events = value
    }
    else if (arg === '--profile') options.profile = true
    else if (arg === '--dialect' || arg.startsWith('--dialect=')) {
      const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : args[++i]
      if (value !== 'sqlite' && value !== 'postgres') return `--dialect takes sqlite or postgres (got ${value})`
      options.dialects = [value]
    } else return `unknown argument: ${arg}`
  }
  return options
}

// ---------------------------------------------------------------------------------------------------------
// One dialect

async function runDialect({ dialect, database, receiverOrigin, plan, work, profile }) {
  const profileDir = profile ? mkdtempSync(path.join(work, `profile-${dialect}-`)) : undefined
  const herald = await startHerald(database, profileDir)
  const windows = {}
  const result = { dialect }
  let reader
  try {
    const api = await provision(herald.origin, herald.operatorToken)
    const hookUrl = `${receiverOrigin}/hook`
    reader = await database.reader(api.accountId)

    // 1. Drain: N held deliveries made due, then the endpoint enabled. First a warm-up on another endpoint, so the
    //    drain measures the delivery path as a running Herald has it (compiled, connections to the receiver
    //    open) rather than its first second after start.
    const warmEndpoint = await api.createEndpoint(hookUrl)
    await publishMany(api, plan.warmupDeliveries, PRELOAD_CONNECTIONS)
    await waitForSucceeded(reader, warmEndpoint, plan.warmupDeliveries, performance.now() + plan.drainTimeoutS * 1000, 'warm-up', 50)
    await api.call('DELETE', `/webhooks/endpoints/${warmEndpoint}`, undefined, 204)
    const rounds = []
    let drainEndpoint
    for (let round = 1; round <= plan.drainRounds; round++) {
      if (drainEndpoint) await api.call('DELETE', `/webhooks/endpoints/${drainEndpoint}`, undefined, 204)
      drainEndpoint = await api.createEndpoint(hookUrl)
      await api.call('PATCH', `/webhooks/endpoints/${drainEndpoint}`, { status: 'disabled' }, 200)
      const preload = await publishMany(api, plan.events, PRELOAD_CONNECTIONS)
      const held = await reader.count(drainEndpoint, 'held')
      if (held !== plan.events) throw new Error(`expected ${plan.events} held deliveries after the pre-load, found ${held}`)
      // The queue, loaded: the held deliveries due now, in one statement. Enabling the endpoint would release them
      // 500 at a time between the worker's claims, and the drain would time the release too.
      await database.queueHeld(drainEndpoint)
      console.log(`round ${round}: pre-load of ${plan.events} events (endpoint disabled) in ${preload.seconds.toFixed(1)} s, ${preload.rps.toFixed(0)}/s with ${PRELOAD_CONNECTIONS} in flight`)
      await settle(database)
      const floor = await httpFloor(receiverOrigin, plan.httpFloorS)
      console.log(`  floor, undici → receiver: ${floor.rps.toFixed(0)} req/s (${FLOOR_IN_FLIGHT} in flight, from core ${SERVER_CORE}, Herald idle)`)
      await settle(database)
      const drained = await drain({ api, reader, database, receiverOrigin, endpointId: drainEndpoint, n: plan.events, herald, timeoutS: plan.drainTimeoutS })
      rounds.push({ drain: drained, floor, ratio: drained.rate / floor.rps })
    }
    // The round whose drain-to-floor ratio is the median stands for the run, with its own floor.
    const typical = [...rounds].sort((a, b) => a.ratio - b.ratio)[Math.floor(rounds.length / 2)]
    result.drain = typical.drain
    windows.drain = typical.drain.window
    result.httpFloor = typical.floor
    result.drainRounds = rounds

    // 2. Publish API rate: the endpoint disabled, so each publish stores an event and a held delivery.
    await api.call('PATCH', `/webhooks/endpoints/${drainEndpoint}`, { status: 'disabled' }, 200)
    const request = {
      url: `${api.base}/webhooks/events`,
      headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'bench.published', data: { order: 'ord_0001', amount: 4200, currency: 'EUR' } }),
    }
    await load({ ...request, label: `${dialect} publish warm-up`, connections: PUBLISH_CONNECTIONS, seconds: plan.publishWarmupS, pid: herald.proc.pid })
    await settle(database)
    const publishFrom = nowUs()
    result.publish = await load({ ...request, label: `${dialect} publish`, connections: PUBLISH_CONNECTIONS, seconds: plan.publishS, pid: herald.proc.pid })
    windows.publish = { fromUs: publishFrom, toUs: nowUs() }
    console.log(
      `publish: ${result.publish.rps.toFixed(0)} req/s, p50 ${formatMs(result.publish.p50)} ms, p99 ${formatMs(result.publish.p99)} ms, ` +
        `Herald CPU ${pct(result.publish.serverCpu)} (${result.publish.perCpuSecond ? `${(1e6 / result.publish.perCpuSecond).toFixed(0)} µs per publish` : 'n/a'}), ` +
        `others on core ${SERVER_CORE} ${pct(result.publish.othersOnServerCore)}`,
    )

    // 3. Publish-to-receive latency: a fresh active endpoint. The old one goes with the held deliveries of the
    //    publishes (warm-up and measured), which the delete cancels a batch at a time, the first in the request and
    //    the rest in the worker; the latency phase waits for the last.
    const held = await reader.count(drainEndpoint, 'held')
    const deleting = performance.now()
    await api.call('DELETE', `/webhooks/endpoints/${drainEndpoint}`, undefined, 204)
    const deleted = performance.now()
    // Asked of the small sweeps table: counting the held rows every few milliseconds would compete with the sweep.
    while (await reader.sweeping(drainEndpoint)) {
      if (performance.now() > deleted + plan.drainTimeoutS * 1000) throw new Error(`the delete's sweep left held deliveries after ${plan.drainTimeoutS} s`)
      await sleep(20)
    }
    const left = await reader.count(drainEndpoint, 'held')
    if (left !== 0) throw new Error(`the delete's sweep ended with ${left} deliveries still held`)
    result.deletion = { held, requestMs: deleted - deleting, sweepSeconds: (performance.now() - deleted) / 1000 }
    console.log(`delete of the endpoint with ${held} held deliveries: the request ${result.deletion.requestMs.toFixed(0)} ms, then the workers' sweep ${result.deletion.sweepSeconds.toFixed(2)} s`)
    const liveEndpoint = await api.createEndpoint(hookUrl)
    await settle(database)
    result.latency = await latency({ api, receiverOrigin, seconds: plan.latencyS, herald, windows })
    await checkSample(api, liveEndpoint, receiverOrigin)
  } catch (error) {
    const output = herald.proc.output().trim()
    if (output) console.log(`Herald's output (last lines):\n${output.split('\n').slice(-20).join('\n')}`)
    throw error
  } finally {
    await reader?.close()
    const exit = await herald.proc.stop(15_000)
    if (exit.code !== 0 && exit.code !== null) console.log(`  (Herald exited with ${exit.code})`)
  }
  if (profileDir) printProfiles(profileDir, windows, result)

  // 4. The database floors, with Herald stopped.
  await settle(database)
  result.writeFloor = await database.batchedWrites(plan.events)
  console.log(
    `floor, bare batched writes (${FLOOR_BATCH} per batch): insert ${result.writeFloor.insertRps.toFixed(0)} rows/s; ` +
      `claim + complete ${result.writeFloor.drainRps.toFixed(0)} rows/s`,
  )
  await settle(database)
  result.publishFloor = await database.publishTransactions(plan.txFloorS)
  console.log(`floor, bare single-row publish transactions: ${result.publishFloor.rps.toFixed(0)}/s (${result.publishFloor.concurrency} at once)`)
  return result
}

const trace = process.env.HERALD_BENCH_TRACE ? (what) => console.error(`TRACE ${new Date().toISOString()} ${what}`) : () => {}

/**
 * Before a measured phase: the database writes back what the earlier phases left in its log, then the cores
 * calm down. Without it, a PostgreSQL checkpoint that the pre-loads' WAL set off once ran through the whole
 * latency phase, whose p99 measured 126.6 ms (71.4 ms in the next run, with the checkpoint first).
 */
export async function settle(database) {
  await database.checkpoint()
  await quiet()
}

async function quiet() {
  const calm = await waitForQuiet(QUIET_WAIT_MS)
  if (calm && !calm.quiet) console.log(`  (cores still busy with other processes: core ${SERVER_CORE} ${pct(calm.shares[0])}, core ${LOAD_CORE} ${pct(calm.shares[1])})`)
}

function nowUs() {
  return Number(process.hrtime.bigint() / 1000n)
}

async function drain({ api, reader, database, receiverOrigin, endpointId, n, herald, timeoutS }) {
  // Progress is watched at the receiver, which counts what arrives at no cost to Herald or the database; only
  // once all N have arrived is the database asked, until it records all N `succeeded`. (Counting them in the
  // database every few milliseconds throughout took a large share of PostgreSQL's CPU, on Herald's core.)
  const arrivedBefore = (await control(receiverOrigin, 'GET', '/__control/stats')).received
  // The N deliveries wait, due, for their endpoint to be enabled; the drain starts once that has committed (the
  // worker is woken by the same commit).
  const enabling = performance.now()
  await api.call('PATCH', `/webhooks/endpoints/${endpointId}`, { status: 'active' }, 200)
  const cpu = cpuWindow(herald.proc.pid)
  const databaseBefore = database.serverCpuSeconds()
  const fromUs = nowUs()
  const started = performance.now()
  const enableSeconds = (started - enabling) / 1000
  const deadline = started + timeoutS * 1000
  const progress = []
  let arrived = 0
  let nextMark = 1000
  while (arrived < n && performance.now() < deadline) {
    arrived = (await control(receiverOrigin, 'GET', '/__control/stats')).received - arrivedBefore
    if (performance.now() - started >= nextMark) {
      progress.push(arrived)
      nextMark += 1000
    }
    if (arrived < n) await sleep(10)
  }
  await waitForSucceeded(reader, endpointId, n, deadline, 'drain', 5)
  const seconds = (performance.now() - started) / 1000
  const window = { fromUs, toUs: nowUs() }
  const usage = cpu.end()
  const databaseAfter = database.serverCpuSeconds()
  const rate = n / seconds
  const perCpuSecond = usage.serverCpu ? n / (usage.serverCpu * seconds) : undefined
  // The database server's CPU per delivery, where it is a separate server on this machine (PostgreSQL).
  const databaseUs = databaseBefore !== undefined && databaseAfter !== undefined ? ((databaseAfter - databaseBefore) * 1e6) / n : undefined
  const machineBusy = usage.serverCore !== undefined && usage.loadCore !== undefined ? (usage.serverCore + usage.loadCore) / 2 : undefined
  console.log(
    `  drain: ${n} deliveries succeeded in ${seconds.toFixed(2)} s = ${rate.toFixed(0)}/s, after the enable request took ${enableSeconds.toFixed(2)} s; Herald CPU ${pct(usage.serverCpu)} ` +
      `(${perCpuSecond ? `${(1e6 / perCpuSecond).toFixed(0)} µs per delivery` : 'n/a'}), others on core ${SERVER_CORE} ${pct(usage.othersOnServerCore)}` +
      (databaseUs !== undefined ? `; the database server's CPU ${databaseUs.toFixed(0)} µs per delivery` : '') +
      `; both cores ${pct(machineBusy)} busy` +
      (progress.length > 0 ? `; arrived at the receiver after each second: ${progress.join(', ')}` : ''),
  )
  return { n, seconds, rate, enableSeconds, perCpuSecond, databaseUs, machineBusy, window, ...usage }
}

/** Polls the database every `pollMs` until the endpoint has `n` succeeded deliveries; throws at `deadline`. */
async function waitForSucceeded(reader, endpointId, n, deadline, phase, pollMs) {
  let done
  while ((done = await reader.count(endpointId, 'succeeded')) < n) {
    if (performance.now() > deadline) throw new Error(`${phase}: only ${done} of ${n} deliveries succeeded in time`)
    await sleep(pollMs)
  }
}

/** Publishes `n` events with `connections` in flight; answers the rate. */
async function publishMany(api, n, connections) {
  const pool = new Pool(api.origin, { connections })
  let next = 0
  const started = performance.now()
  try {
    const worker = async () => {
      while (next < n) {
        const i = next++
        const response = await pool.request({ path: `${api.basePath}/webhooks/events`, method: 'POST', headers: api.jsonHeaders, body: JSON.stringify({ type: 'bench.preloaded', data: { n: i, order: 'ord_0001' } }) })
        const text = await response.body.text()
        if (response.statusCode !== 201) throw new Error(`pre-load publish answered ${response.statusCode}: ${text}`)
      }
    }
    await Promise.all(Array.from({ length: connections }, worker))
  } finally {
    await pool.close()
  }
  const seconds = (performance.now() - started) / 1000
  return { seconds, rps: n / seconds }
}

/**
 * Publishes at LATENCY_RATE for `seconds`, driven by a timer that sends whatever the schedule says is due (so
 * a slow answer does not slow the schedule down), then collects each webhook-id's arrival from the receiver.
 */
async function latency({ api, receiverOrigin, seconds, herald, windows }) {
  await control(receiverOrigin, 'POST', '/__control/record')
  const pool = new Pool(api.origin, { connections: 64 })
  const sentAt = new Map()
  const publishLatencies = []
  const failures = []
  const pending = new Set()
  const total = Math.round(LATENCY_RATE * seconds)
  let sent = 0
  let skipped = 0
  const cpu = cpuWindow(herald.proc.pid)
  const fromUs = nowUs()
  const started = process.hrtime.bigint()
  const publishOne = (i) => {
    const at = process.hrtime.bigint()
    const done = pool
      .request({
        path: `${api.basePath}/webhooks/events`,
        method: 'POST',
        headers: api.jsonHeaders,
        body: JSON.stringify({ type: 'bench.latency', data: { n: i, order: 'ord_0001' } }),
        // Queued in the pool or sent, no publish outlives this.
        signal: AbortSignal.timeout(PUBLISH_TIMEOUT_MS),
      })
      .then(async (response) => {
        const text = await response.body.text()
        if (response.statusCode !== 201) throw new Error(`publish answered ${response.statusCode}: ${text}`)
        publishLatencies.push(Number(process.hrtime.bigint() - at) / 1e6)
        sentAt.set(JSON.parse(text).id, at)
      })
      .catch((error) => failures.push(`${error.name}: ${error.message}${error.code ? ` (${error.code})` : ''}`))
      .finally(() => pending.delete(done))
    pending.add(done)
  }
  while (sent + skipped < total) {
    const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6
    const due = Math.min(total, Math.floor((elapsedMs * LATENCY_RATE) / 1000))
    // An overloaded Herald would otherwise collect an unbounded backlog: past MAX_OUTSTANDING the publish is
    // skipped and counted, and the achieved rate says what was really offered.
    while (sent + skipped < due) {
      if (pending.size >= MAX_OUTSTANDING) skipped++
      else publishOne(sent++)
    }
    await sleep(1)
  }
  const sendSeconds = Number(process.hrtime.bigint() - started) / 1e9
  // Each publish carries a timeout, but don't trust it alone: whatever is still unsettled after it counts as
  // failed, and destroying the pool ends it (close() has been seen to wait on idle sockets).
  await Promise.race([Promise.all(pending), sleep(PUBLISH_TIMEOUT_MS + 5000)])
  trace(`settled but ${pending.size}`)
  if (pending.size > 0) failures.push(...Array.from(pending, () => `unsettled after ${PUBLISH_TIMEOUT_MS + 5000} ms`))
  await Promise.race([pool.destroy(), sleep(5000)])
  trace('pool destroyed')
  if (failures.length > 0) {
    const kinds = new Map()
    for (const message of failures) kinds.set(message, (kinds.get(message) ?? 0) + 1)
    console.log(`  latency: ${failures.length} publishes FAILED: ${[...kinds].map(([message, count]) => `${count} × ${message}`).join('; ')}`)
    const output = herald.proc.output().trim()
    if (output) console.log(`  Herald's output (last lines):\n${output.split('\n').slice(-15).join('\n')}`)
  }
  // Wait for the stragglers.
  const deadline = performance.now() + 30_000
  let stats
  do {
    stats = await control(receiverOrigin, 'GET', '/__control/stats')
    if (stats.recorded >= sentAt.size) break
    await sleep(50)
  } while (performance.now() < deadline)
  windows.latency = { fromUs, toUs: nowUs() }
  trace('stragglers done')
  const usage = cpu.end()
  const { arrivals } = await control(receiverOrigin, 'GET', '/__control/arrivals')
  trace('arrivals fetched')
  const latencies = []
  for (const [id, at] of arrivals) {
    const sentTime = sentAt.get(id)
    if (sentTime !== undefined) latencies.push(Number(BigInt(at) - sentTime) / 1e6)
  }
  const missing = sentAt.size - latencies.length
  const result = {
    rate: sentAt.size / sendSeconds,
    events: sentAt.size,
    missing,
    skipped,
    failed: failures.length,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    max: percentile(latencies, 1),
    publishP50: percentile(publishLatencies, 0.5),
    publishP99: percentile(publishLatencies, 0.99),
    ...usage,
  }
  console.log(
    `latency: ${sentAt.size} events at ${result.rate.toFixed(0)}/s${skipped > 0 ? ` (${skipped} NOT SENT: ${MAX_OUTSTANDING} publishes were outstanding)` : ''}; publish-to-receive p50 ${formatMs(result.p50)} ms, p99 ${formatMs(result.p99)} ms, max ${formatMs(result.max)} ms` +
      `${missing > 0 ? `, ${missing} NOT RECEIVED within 30 s` : ''}; the publish request itself p50 ${formatMs(result.publishP50)} ms, p99 ${formatMs(result.publishP99)} ms; ` +
      `Herald CPU ${pct(usage.serverCpu)}`,
  )
  return result
}

/** The first webhook of the latency phase, checked with standardwebhooks against the endpoint's secret. */
async function checkSample(api, endpointId, receiverOrigin) {
  const sample = await control(receiverOrigin, 'GET', '/__control/sample')
  if (!sample) throw new Error('the receiver kept no sample webhook')
  const { secret } = await api.call('GET', `/webhooks/endpoints/${endpointId}/secret`, undefined, 200)
  const payload = new Webhook(secret).verify(sample.body, sample.headers)
  if (payload.type !== 'bench.latency') throw new Error(`sample webhook has type ${payload.type}`)
  console.log(`sample webhook: ${payload.type}, ${sample.body.length} bytes, signature verified with standardwebhooks`)
}

export function percentile(values, p) {
  if (values.length === 0) return undefined
  const sorted = Float64Array.from(values).sort()
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]
}

export async function control(origin, method, pathname) {
  const response = await fetch(`${origin}${pathname}`, { method, signal: AbortSignal.timeout(10_000) })
  if (response.status !== 200) throw new Error(`receiver ${method} ${pathname}: ${response.status}`)
  return response.json()
}

async function httpFloor(receiverOrigin, seconds) {
  const proc = startNode('http-floor', [path.join(ROOT, 'bench', 'peers', 'http-floor.mjs')], {
    core: SERVER_CORE,
    env: { TARGET: `${receiverOrigin}/hook`, CONNECTIONS: String(FLOOR_IN_FLIGHT), SECONDS: String(seconds), WARMUP_SECONDS: '1' },
  })
  try {
    const result = await proc.firstJsonLine((seconds + 30) * 1000)
    if (result.failures > 0) throw new Error(`http floor: ${result.failures} failed requests`)
    return result
  } finally {
    await proc.stop()
  }
}

// ---------------------------------------------------------------------------------------------------------
// Herald and its API

export async function startHerald(database, profileDir) {
  const port = await freePort()
  const env = heraldEnv(port, database.url, {
    HERALD_WEBHOOK_ALLOW_HTTP: 'true',
    HERALD_WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
    LOG_LEVEL: 'warn',
  })
  const nodeFlags = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []
  const proc = startNode('herald', [path.join(ROOT, 'dist', 'main.js'), 'serve'], { env, nodeFlags, core: SERVER_CORE })
  const origin = `http://127.0.0.1:${port}`
  await waitForHttp(`${origin}/healthz`, START_TIMEOUT_MS, proc)
  return { origin, operatorToken: env.HERALD_OPERATOR_TOKEN, proc }
}

/** An account, a management token for `scope` from its admin client, and helpers for its webhook API. */
export async function provision(origin, operatorToken, scope = 'herald:events:publish herald:webhooks:read herald:webhooks:write') {
  const created = await request('POST', `${origin}/accounts`, { authorization: `Bearer ${operatorToken}` }, { name: 'bench' }, 201)
  const { issuer, id: accountId } = created.account
  const admin = created.admin_client
  const token = await request(
    'POST',
    `${issuer}/oauth/tokens`,
    { authorization: basic(admin.client_id, admin.client_secret) },
    new URLSearchParams({ grant_type: 'client_credentials', scope }),
    200,
  )
  const bearer = { authorization: `Bearer ${token.access_token}` }
  const api = {
    origin,
    accountId,
    base: issuer,
    basePath: new URL(issuer).pathname,
    token: token.access_token,
    jsonHeaders: { ...bearer, 'content-type': 'application/json' },
    call: (method, pathname, body, expected) => request(method, `${issuer}${pathname}`, bearer, body, expected),
    /**
     * An active endpoint allowed MAX_IN_FLIGHT attempts at once, subscribed to the bench's events (bench.*, not
     * `*`: Herald's own webhook.endpoint.* events would otherwise add deliveries to the counts).
     */
    async createEndpoint(url) {
      const endpoint = await api.call('POST', '/webhooks/endpoints', { url, max_in_flight: MAX_IN_FLIGHT }, 201)
      await api.call('POST', '/webhooks/subscriptions', { endpoint_id: endpoint.id, event_types: ['bench.*'] }, 201)
      return endpoint.id
    },
  }
  return api
}

export async function request(method, url, headers, body, expected) {
  const form = body instanceof URLSearchParams
  const response = await fetch(url, {
    method,
    headers: { ...headers, ...(body !== undefined && { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json' }) },
    body: body === undefined ? undefined : form ? body.toString() : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  })
  const text = await response.text()
  if (response.status !== expected) throw new Error(`${method} ${url} answered ${response.status}, expected ${expected}: ${text}`)
  return text ? JSON.parse(text) : undefined
}

// ---------------------------------------------------------------------------------------------------------
// The databases: a fresh one per dialect, a reader for the drain's counts, and the bare-write floors

export async function createDatabase(dialect, work) {
  if (dialect === 'sqlite') return sqliteDatabase(path.join(work, 'herald.db'))
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 3000 })
  try {
    await admin.connect()
  } catch (error) {
    console.log(`PostgreSQL unavailable at ${POSTGRES_ADMIN_URL} (${error.message}): skipped`)
    return undefined
  }
  const name = `herald_bench_${process.pid}`
  try {
    await admin.query(`drop database if exists ${name}`)
    await admin.query(`create database ${name}`)
  } finally {
    await admin.end()
  }
  const url = new URL(POSTGRES_ADMIN_URL)
  url.pathname = `/${name}`
  return postgresDatabase(url.toString(), name)
}

const DELIVERY_COLUMNS = [
  'id', 'account_id', 'event_id', 'event_type', 'endpoint_id', 'status', 'attempt_count', 'next_attempt_at', 'lease_token',
  'leased_at', 'last_attempt_at', 'last_response_status', 'last_error', 'finished_at', 'created_at',
]
const ATTEMPT_COLUMNS = ['delivery_id', 'number', 'account_id', 'started_at', 'duration_ms', 'response_status', 'error', 'response_excerpt', 'request_url', 'request_signature']
/** What Herald records of each attempt's request: the receiver's URL and a one-secret signature header. */
const SENT_REQUEST = ['http://127.0.0.1:9/hooks', `v1,${Buffer.alloc(32, 7).toString('base64')}`]
const EVENT_COLUMNS = ['id', 'account_id', 'type', 'data', 'created_at', 'fanned_out_at', 'idempotency_key']
/** Whether a sweep of the endpoint's deliveries is still under way (see StatusSweeps). */
const SWEEPING_SQL = 'select 1 from webhook_sweeps where endpoint_id = $1 limit 1'
/** What releasing an endpoint's held deliveries comes down to, for all of them at once. */
const QUEUE_HELD_SQL = `update webhook_deliveries set status = 'pending', next_attempt_at = $1 where endpoint_id = $2 and status = 'held'`
const EVENT_DATA = JSON.stringify({ order: 'ord_0001', amount: 4200, currency: 'EUR' })

/** A pending delivery row as fan-out writes it, in DELIVERY_COLUMNS order. */
function deliveryRow(accountId, endpointId, now) {
  return [`dlv_${randomUUID()}`, accountId, `evt_${randomUUID()}`, 'bench.floor', endpointId, 'pending', 0, now, null, null, null, null, null, null, now]
}

/**
 * The statements the worker's writes come down to, with `p(i)` making the dialect's i-th placeholder: a
 * claim's lease UPDATE (no indexed column changes) and its count in webhook_leases, a completion's fenced
 * UPDATE … FROM a list of rows (applyPlans in completion-statements.ts binds the rows as one JSON parameter; here they are a
 * VALUES list), its attempts INSERT and the end of the lease's count.
 */
function floorSql(n, p) {
  let i = 0
  const next = () => p(++i)
  const rows = (columns) => Array.from({ length: n }, () => `(${columns.map(() => next()).join(', ')})`).join(', ')
  const insertDeliveries = `insert into webhook_deliveries (${DELIVERY_COLUMNS.join(', ')}) values ${rows(DELIVERY_COLUMNS)}`
  i = 0
  const pick = `select id from webhook_deliveries where endpoint_id = ${next()} and status = 'pending' and next_attempt_at <= ${next()} and (lease_expires_at is null or lease_expires_at <= ${next()}) order by next_attempt_at limit ${n}`
  i = 0
  const lease = `update webhook_deliveries set lease_token = ${next()}, leased_at = ${next()}, lease_expires_at = ${next()} where id in (${Array.from({ length: n }, () => next()).join(', ')})`
  i = 0
  const countLease = `insert into webhook_leases (lease_token, endpoint_id, holder, outstanding, expires_at) values (${next()}, ${next()}, ${next()}, ${next()}, ${next()})`
  i = 0
  const values = Array.from(
    { length: n },
    () =>
      `(cast(${next()} as text), cast(${next()} as text), cast(${next()} as text), cast(${next()} as integer), cast(${next()} as bigint), cast(${next()} as bigint), cast(${next()} as integer), cast(${next()} as text), cast(${next()} as bigint))`,
  ).join(', ')
  const complete = `update webhook_deliveries set
      status = v.column3, attempt_count = v.column4, next_attempt_at = v.column5, lease_token = null, leased_at = null, lease_expires_at = null,
      last_attempt_at = v.column6, last_response_status = v.column7, last_error = v.column8, finished_at = v.column9
    from (values ${values}) as v
    where webhook_deliveries.id = v.column1 and webhook_deliveries.lease_token = v.column2
    returning webhook_deliveries.id`
  i = 0
  const insertAttempts = `insert into webhook_attempts (${ATTEMPT_COLUMNS.join(', ')}) values ${rows(ATTEMPT_COLUMNS)} on conflict do nothing`
  i = 0
  const endLease = `delete from webhook_leases where lease_token = ${next()} and endpoint_id = ${next()}`
  return { insertDeliveries, pick, lease, countLease, complete, insertAttempts, endLease }
}

function completionParams(ids, leaseToken, now) {
  return ids.flatMap((id) => [id, leaseToken, 'succeeded', 1, null, now, 204, null, now])
}

function attemptParams(ids, accountId, now) {
  return ids.flatMap((id) => [id, 1, accountId, now, 1, 204, null, '', ...SENT_REQUEST])
}

async function timed(work) {
  const started = performance.now()
  await work()
  return (performance.now() - started) / 1000
}

function floorResult(n, insertSeconds, drainSeconds) {
  return { rows: n, insertRps: n / insertSeconds, drainRps: n / drainSeconds }
}

function sqliteDatabase(file) {
  const open = () => {
    const db = new SQLite(file)
    db.pragma('journal_mode = WAL')
    db.pragma('busy_timeout = 5000')
    db.pragma('foreign_keys = ON')
    db.pragma('synchronous = NORMAL')
    return db
  }
  return {
    url: `sqlite:${file}`,
    // SQLite runs inside Herald's process: its CPU is Herald's.
    serverCpuSeconds: () => undefined,
    async checkpoint() {
      const db = open()
      try {
        // PASSIVE: copies what it can without waiting for Herald's connections, which TRUNCATE or RESTART would block.
        const [result] = db.pragma('wal_checkpoint(PASSIVE)')
        if (result?.busy) console.log('  (SQLite checkpoint incomplete: the database was busy)')
      } finally {
        db.close()
      }
    },
    async drop() {
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true })
    },
    async queueHeld(endpointId) {
      const db = open()
      try {
        db.prepare(QUEUE_HELD_SQL.replaceAll(/\$\d/g, '?')).run(Date.now(), endpointId)
      } finally {
        db.close()
      }
    },
    async reader(accountId) {
      const db = new SQLite(file, { readonly: true })
      const count = db.prepare('select count(*) as n from webhook_deliveries where account_id = ? and endpoint_id = ? and status = ?')
      const sweeping = db.prepare(SWEEPING_SQL.replaceAll(/\$\d/g, '?'))
      return {
        count: async (endpointId, status) => count.get(accountId, endpointId, status).n,
        sweeping: async (endpointId) => sweeping.get(endpointId) !== undefined,
        close: async () => db.close(),
      }
    },
    async batchedWrites(n) {
      const db = open()
      try {
        const { accountId, endpointId } = floorIds(db.prepare('select id from accounts limit 1').get().id)
        const sql = floorSql(FLOOR_BATCH, () => '?')
        const insert = db.prepare(sql.insertDeliveries)
        const pick = db.prepare(sql.pick)
        const lease = db.prepare(sql.lease)
        const countLease = db.prepare(sql.countLease)
        const complete = db.prepare(sql.complete)
        const attempts = db.prepare(sql.insertAttempts)
        const endLease = db.prepare(sql.endLease)
        const batches = Math.ceil(n / FLOOR_BATCH)
        const now = Date.now()
        const insertSeconds = await timed(async () => {
          const batch = db.transaction(() => insert.run(Array.from({ length: FLOOR_BATCH }, () => deliveryRow(accountId, endpointId, now)).flat()))
          for (let b = 0; b < batches; b++) batch()
        })
        const drainSeconds = await timed(async () => {
          for (let b = 0; b < batches; b++) {
            const token = randomUUID()
            const ids = db.transaction(() => {
              const picked = pick.all(endpointId, now, now).map((row) => row.id)
              lease.run(token, now, now + 60_000, ...picked)
              countLease.run(token, endpointId, 'floor', picked.length, now + 60_000)
              return picked
            })()
            db.transaction(() => {
              const kept = complete.all(completionParams(ids, token, now)).map((row) => row.id)
              attempts.run(attemptParams(kept, accountId, now))
              endLease.run(token, endpointId)
            })()
          }
        })
        return floorResult(batches * FLOOR_BATCH, insertSeconds, drainSeconds)
      } finally {
        db.close()
      }
    },
    async publishTransactions(seconds) {
      const db = open()
      try {
        const { accountId, endpointId } = floorIds(db.prepare('select id from accounts limit 1').get().id)
        const event = db.prepare(`insert into events (${EVENT_COLUMNS.join(', ')}) values (${EVENT_COLUMNS.map(() => '?').join(', ')})`)
        const delivery = db.prepare(`insert into webhook_deliveries (${DELIVERY_COLUMNS.join(', ')}) values (${DELIVERY_COLUMNS.map(() => '?').join(', ')})`)
        const publish = db.transaction(() => {
          const now = Date.now()
          const row = deliveryRow(accountId, endpointId, now)
          event.run(row[2], accountId, 'bench.floor', EVENT_DATA, now, now, null)
          delivery.run(row.slice(0, 5).concat(['held', 0, null, null, null, null, null, null, null, now]))
        })
        let count = 0
        const started = performance.now()
        const until = started + seconds * 1000
        while (performance.now() < until) {
          for (let i = 0; i < 100; i++) publish()
          count += 100
        }
        return { rps: count / ((performance.now() - started) / 1000), concurrency: 1 }
      } finally {
        db.close()
      }
    },
  }
}

/** The floors write under the bench account and an endpoint id nothing else uses. */
function floorIds(accountId) {
  return { accountId, endpointId: `ep_floor_${randomUUID()}` }
}

function postgresDatabase(url, name) {
  let checkpointRefused = false
  const connect = async () => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    return client
  }
  const accountOf = async (client) => (await client.query('select id from accounts limit 1')).rows[0].id
  return {
    url,
    // Every process of the server, backends and helpers; undefined when it runs on another machine.
    serverCpuSeconds: () => cpuSecondsOfCommand('postgres'),
    async checkpoint() {
      const client = await connect()
      try {
        await client.query('checkpoint')
      } catch (error) {
        // CHECKPOINT needs a superuser or pg_checkpoint; without it the phases still run, only less isolated.
        if (!checkpointRefused) console.log(`  (CHECKPOINT refused: ${error.message}; phases may pay for earlier ones' writes)`)
        checkpointRefused = true
      } finally {
        await client.end()
      }
    },
    async drop() {
      const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL })
      await admin.connect()
      try {
        await admin.query(`drop database if exists ${name} with (force)`)
      } finally {
        await admin.end()
      }
    },
    async queueHeld(endpointId) {
      const client = await connect()
      try {
        await client.query(QUEUE_HELD_SQL, [Date.now(), endpointId])
      } finally {
        await client.end()
      }
    },
    async reader(accountId) {
      const client = await connect()
      return {
        async count(endpointId, status) {
          const { rows } = await client.query('select count(*)::int as n from webhook_deliveries where account_id = $1 and endpoint_id = $2 and status = $3', [accountId, endpointId, status])
          return rows[0].n
        },
        async sweeping(endpointId) {
          return (await client.query(SWEEPING_SQL, [endpointId])).rows.length > 0
        },
        close: () => client.end(),
      }
    },
    async batchedWrites(n) {
      const client = await connect()
      try {
        const { accountId, endpointId } = floorIds(await accountOf(client))
        const sql = floorSql(FLOOR_BATCH, (i) => `$${i}`)
        const batches = Math.ceil(n / FLOOR_BATCH)
        const now = Date.now()
        const tx = async (work) => {
          await client.query('begin')
          try {
            const result = await work()
            await client.query('commit')
            return result
          } catch (error) {
            await client.query('rollback')
            throw error
          }
        }
        const insertSeconds = await timed(async () => {
          for (let b = 0; b < batches; b++) {
            await tx(() => client.query({ text: sql.insertDeliveries, values: Array.from({ length: FLOOR_BATCH }, () => deliveryRow(accountId, endpointId, now)).flat() }))
          }
        })
        const drainSeconds = await timed(async () => {
          for (let b = 0; b < batches; b++) {
            const token = randomUUID()
            const ids = await tx(async () => {
              const picked = (await client.query(`${sql.pick} for update skip locked`, [endpointId, now, now])).rows.map((row) => row.id)
              await client.query(sql.lease, [token, now, now + 60_000, ...picked])
              await client.query(sql.countLease, [token, endpointId, 'floor', picked.length, now + 60_000])
              return picked
            })
            await tx(async () => {
              const kept = (await client.query(sql.complete, completionParams(ids, token, now))).rows.map((row) => row.id)
              await client.query(sql.insertAttempts, attemptParams(kept, accountId, now))
              await client.query(sql.endLease, [token, endpointId])
            })
          }
        })
        return floorResult(batches * FLOOR_BATCH, insertSeconds, drainSeconds)
      } finally {
        await client.end()
      }
    },
    async publishTransactions(seconds) {
      const clients = await Promise.all(Array.from({ length: PG_POOL }, connect))
      try {
        const { accountId, endpointId } = floorIds(await accountOf(clients[0]))
        const eventSql = `insert into events (${EVENT_COLUMNS.join(', ')}) values (${EVENT_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`
        const deliverySql = `insert into webhook_deliveries (${DELIVERY_COLUMNS.join(', ')}) values (${DELIVERY_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`
        let count = 0
        const started = performance.now()
        const until = started + seconds * 1000
        await Promise.all(
          clients.map(async (client) => {
            while (performance.now() < until) {
              const now = Date.now()
              const row = deliveryRow(accountId, endpointId, now)
              await client.query('begin')
              await client.query(eventSql, [row[2], accountId, 'bench.floor', EVENT_DATA, now, now, null])
              await client.query(deliverySql, row.slice(0, 5).concat(['held', 0, null, null, null, null, null, null, null, now]))
              await client.query('commit')
              count++
            }
          }),
        )
        return { rps: count / ((performance.now() - started) / 1000), concurrency: PG_POOL }
      } finally {
        await Promise.all(clients.map((client) => client.end()))
      }
    },
  }
}

// ---------------------------------------------------------------------------------------------------------
// Reporting

function printProfiles(dir, windows, result) {
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'))
  if (!file) {
    console.log(`  (Herald wrote no .cpuprofile into ${dir})`)
    return
  }
  for (const [phase, count] of [
    ['drain', result.drain?.n],
    ['publish', result.publish?.ok],
  ]) {
    const window = windows[phase]
    if (!window || !count) continue
    const summary = summarizeProfile(path.join(dir, file), { top: 25, window })
    if (summary.samples === 0) continue
    const per = (micros) => (micros / count).toFixed(1).padStart(6)
    console.log(`\nHerald CPU profile, ${phase} phase (${result.dialect}): ${(summary.totalMicros / 1e6).toFixed(1)} s sampled, ${per(summary.totalMicros).trim()} µs per ${phase === 'drain' ? 'delivery' : 'publish'} (idle included)`)
    console.log('  self time by area:               share   µs/item')
    for (const area of summary.areas.slice(0, 10)) console.log(`    ${area.name.padEnd(30)} ${share(area.share)}  ${per(area.micros)}`)
    console.log('  top self-time functions:         share   µs/item')
    for (const fn of summary.functions) console.log(`    ${share(fn.share)}  ${per(fn.micros)}  ${fn.name}`)
  }
  console.log(`  profile: ${path.join(dir, file)}`)
}

function printTable(results, plan) {
  const rows = []
  const line = (dialect, figure, herald, perCpu = '', floor = '', ratioText = '', goal = '') => rows.push([dialect, figure, herald, perCpu, floor, ratioText, goal])
  for (const [dialect, r] of results) {
    if (r.skipped) {
      line(dialect, 'skipped (database unavailable)', '')
      continue
    }
    const drainOk = r.drain.rate >= GOALS.drainPerSecond
    line(
      dialect,
      `drain of ${int(r.drain.n)} queued (deliveries/s)`,
      int(r.drain.rate),
      int(r.drain.perCpuSecond),
      `${int(r.httpFloor.rps)} undici → receiver`,
      ratio(r.drain.rate, r.httpFloor.rps),
      `≥ ${int(GOALS.drainPerSecond)}/s, ≈ ${GOALS.drainShareOfHttpFloor * 100}% of HTTP floor (here ${int(GOALS.drainShareOfHttpFloor * r.httpFloor.rps)}): ` +
        `${drainOk ? 'met' : 'MISSED'} / ${r.drain.rate >= GOALS.drainShareOfHttpFloor * r.httpFloor.rps ? 'met' : 'MISSED'}`,
    )
    line('', '', '', '', `${int(r.writeFloor.drainRps)} batched claim+complete writes`, ratio(r.drain.rate, r.writeFloor.drainRps))
    line('', `  (the enable request, before the drain: ${r.drain.enableSeconds.toFixed(2)} s)`, '')
    const databaseCpu = r.drain.databaseUs !== undefined ? `, PostgreSQL ${int(r.drain.databaseUs)}` : ''
    line('', `  (CPU per delivery, µs: Herald ${r.drain.perCpuSecond ? int(1e6 / r.drain.perCpuSecond) : '–'}${databaseCpu})`, '')
    const publishGoal = dialect === 'postgres' ? `≥ ${int(GOALS.publishPostgres)}/s: ${r.publish.rps >= GOALS.publishPostgres ? 'met' : 'MISSED'}` : '(the goal is for PostgreSQL)'
    line('', `publish, ${PUBLISH_CONNECTIONS} connections (req/s)`, int(r.publish.rps), int(r.publish.perCpuSecond), `${int(r.publishFloor.rps)} bare single-row publish txs`, ratio(r.publish.rps, r.publishFloor.rps), publishGoal)
    line('', '', '', '', `${int(r.writeFloor.insertRps)} batched inserts, rows/s`, ratio(r.publish.rps, r.writeFloor.insertRps))
    line('', 'publish p50 / p99 (ms)', `${formatMs(r.publish.p50)} / ${formatMs(r.publish.p99)}`)
    line('', `delete of the endpoint, ${int(r.deletion.held)} held: request ms / sweep s`, `${int(r.deletion.requestMs)} / ${r.deletion.sweepSeconds.toFixed(2)}`)
    const latencyOk = r.latency.p99 !== undefined && r.latency.p99 < GOALS.latencyP99Ms && r.latency.missing === 0 && r.latency.skipped === 0 && r.latency.failed === 0
    line(
      '',
      `publish→receive @ ${int(r.latency.rate)}/s p50 / p99 (ms)`,
      `${formatMs(r.latency.p50)} / ${formatMs(r.latency.p99)}`,
      '',
      [
        `max ${formatMs(r.latency.max)}; publish alone p99 ${formatMs(r.latency.publishP99)}`,
        ...(r.latency.missing > 0 ? [`${r.latency.missing} not received`] : []),
        ...(r.latency.skipped > 0 ? [`${r.latency.skipped} not sent (backlog)`] : []),
        ...(r.latency.failed > 0 ? [`${r.latency.failed} publishes failed`] : []),
      ].join('; '),
      '',
      `p99 < ${GOALS.latencyP99Ms} ms: ${latencyOk ? 'met' : 'MISSED'}`,
    )
  }
  const headers = ['dialect', 'figure', 'herald', 'per CPU-s', 'floor (same run)', 'ratio', 'goal']
  const right = new Set([2, 3, 5])
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => String(row[i]).length)))
  const format = (row) => row.map((cell, i) => (right.has(i) ? String(cell).padStart(widths[i]) : String(cell).padEnd(widths[i]))).join('  ').trimEnd()
  console.log(`\nwebhook delivery${plan.quick ? ' (--quick: small N, short phases; not for comparison)' : ''}:`)
  console.log(`  ${format(headers)}`)
  for (const row of rows) console.log(`  ${format(row)}`)
  console.log(
    `  per CPU-s: deliveries or publishes per CPU-second of the Herald process (less disturbed by other load than /s). drain: the enable's answer (the N deliveries due) → all N succeeded, ` +
      `counted in the database. floors: undici with ${FLOOR_IN_FLIGHT} in flight from Herald's core; bare better-sqlite3 / pg statements from the bench ` +
      `process (${FLOOR_BATCH} rows per batch; publish txs: one event + one delivery row each, ${PG_POOL} connections on PostgreSQL)`,
  )
  const measured = [...results].filter(([, r]) => !r.skipped && r.drainRounds.length > 1)
  if (measured.length > 0) {
    console.log(`  drain rounds, each drain / the undici floor measured just before it (the table shows the median round's):`)
    for (const [dialect, r] of measured) {
      console.log(`    ${dialect.padEnd(8)}  ${r.drainRounds.map((round) => `${int(round.drain.rate)} / ${int(round.floor.rps)} = ${round.ratio.toFixed(2)}×`).join('   ')}`)
    }
  }
  const contended = [...results.values()]
    .flatMap((r) => (r.skipped ? [] : [...r.drainRounds.map((round) => round.drain.othersOnServerCore), r.publish.othersOnServerCore, r.latency.othersOnServerCore]))
    .filter((v) => v !== undefined)
  const worst = contended.length > 0 ? Math.max(...contended) : 0
  if (worst > 0.1) console.log(`  WARNING: other processes used up to ${pct(worst)} of Herald's core during a phase: the figures are disturbed; re-run on a quiet machine.`)
}

function int(value) {
  return value === undefined ? '–' : Math.round(value).toLocaleString('en-US')
}

function ratio(value, floor) {
  return value === undefined || !floor ? '–' : `${(value / floor).toFixed(2)}×`
}

function pct(value) {
  return value === undefined ? 'n/a' : `${(value * 100).toFixed(0)}%`
}

function share(value) {
  return `${(value * 100).toFixed(1).padStart(5)}%`
}
