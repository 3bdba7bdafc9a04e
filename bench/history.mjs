// The drain beside the history a real table keeps, on PostgreSQL. Retention keeps every finished delivery for 30 days,
// so a busy table holds millions of them; the queue must not slow down with them. In one run, Herald (`herald serve`,
// pinned to one core) delivering to a bare 204 receiver (on the other core, beside this process):
//
//   drain, empty     a backlog of N pending deliveries (half to each of two endpoints of the default max_in_flight,
//                    written with SQL while the endpoints are disabled), timed from the endpoints' enable until all N
//                    are succeeded in the database, on a database that holds only a warm-up's rows. Before each
//                    backlog is written, VACUUM ANALYZE: the state autovacuum leaves a table in while its queue is
//                    empty, statistics that count no pending delivery included (this server may run without it)
//   history          H finished deliveries, their events and attempts, written with SQL: half in the bench account,
//                    to the drain's endpoints, with ids older than the backlogs', and half in another account with
//                    newer ids
//   drain, history   the same backlog drained again, and its ratio to the empty drain (goal ≥ 0.8×)
//
// Each drain runs three times (a fresh backlog each time); the round of median rate stands for it. Beside the rate,
// deliveries per CPU-second of Herald, which the other processes on a shared machine disturb less.
//   lists            the bench account's first page of GET /webhooks/deliveries, unfiltered and status=succeeded,
//                    one request at a time after ten unmeasured, while the other account holds as many newer rows:
//                    p50 and p99; and GET /webhooks/endpoints/{id}/stats of one of its endpoints, for a day by hour and
//                    for 30 days by day (goal: p99 under 50 ms), the history's hourly counts written with it
//
// Each drain also reports PostgreSQL's CPU per delivery and the index entries its statements read per delivery
// (pg_stat_user_indexes), which say whether the cost follows the history or the backlog.
//
//   npm run bench -- history                     H = 2,000,000 (about 3 GB; loading takes minutes)
//   npm run bench -- history --history 200000    a quicker run for local work
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { control, createDatabase, percentile, provision, request, settle, startHerald } from './deliveries.mjs'
import { LOAD_CORE, ROOT, SERVER_CORE, cpuWindow, formatMs, pinSelf, pinningAvailable, startNode } from './support.mjs'

const DEFAULTS = { history: 2_000_000, backlog: 37_000, rounds: 3, warmup: 2000, listRequests: 200, drainTimeoutS: 240 }
const GOAL_RATIO = 0.8
/** The console's endpoint charts read GET /webhooks/endpoints/{id}/stats; its p99 beside a million deliveries. */
const STATS_GOAL_MS = 50
const EVENT_DATA = JSON.stringify({ order: 'ord_0001', amount: 4200, currency: 'EUR' })
const DAY_MS = 24 * 3600 * 1000

export const USAGE = `Usage: npm run bench -- history [--history N] [--backlog N]

  (no flag)         on PostgreSQL: a drain of ${DEFAULTS.backlog} deliveries to two endpoints (max_in_flight left at its
                    default) on an empty database, then with ${DEFAULTS.history} finished deliveries kept, and the ratio;
                    then the first page of the deliveries list beside another account's newer rows (p50, p99)
  --history N       finished deliveries to keep for the second drain (--history 200000 for a quicker run)
  --backlog N       deliveries in each drain
PostgreSQL: HERALD_BENCH_POSTGRES_URL, a fresh database per run, dropped after.`

export async function main(args) {
  const options = parseArgs(args)
  if (typeof options === 'string') {
    console.error(`${options}\n\n${USAGE}`)
    return 2
  }
  const pinned = pinSelf(LOAD_CORE)
  console.log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}; history ${int(options.history)}, backlog ${int(options.backlog)}`)
  console.log(pinningAvailable() && pinned ? `Herald pinned to core ${SERVER_CORE}; receiver and this process on core ${LOAD_CORE}; PostgreSQL unpinned` : 'taskset unavailable: nothing is pinned')
  const work = mkdtempSync(path.join(tmpdir(), 'herald-bench-history-'))
  const receiver = startNode('receiver', [path.join(ROOT, 'bench', 'peers', 'webhook-receiver.mjs')], { core: LOAD_CORE, env: { PORT: '0' } })
  let database
  try {
    const { port } = await receiver.firstJsonLine(20_000)
    database = await createDatabase('postgres', work)
    if (!database) return 1
    const result = await run({ database, receiverOrigin: `http://127.0.0.1:${port}`, options })
    printTable(result, options)
    return 0
  } finally {
    await database?.drop()
    await receiver.stop()
    rmSync(work, { recursive: true, force: true })
  }
}

function parseArgs(args) {
  const options = { history: DEFAULTS.history, backlog: DEFAULTS.backlog }
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    const name = arg.replace(/^--/, '').split('=')[0]
    if (name !== 'history' && name !== 'backlog') return `unknown argument: ${arg}`
    const value = Number(arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : args[++i])
    if (!Number.isInteger(value) || value < (name === 'history' ? 0 : 100)) return `--${name} takes an integer ≥ ${name === 'history' ? 0 : 100}`
    options[name] = value
  }
  return options
}

async function run({ database, receiverOrigin, options }) {
  const herald = await startHerald(database)
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  try {
    const api = await provision(herald.origin, herald.operatorToken)
    const other = await request('POST', `${herald.origin}/accounts`, { authorization: `Bearer ${herald.operatorToken}` }, { name: 'bench-other' }, 201)
    const endpoints = []
    for (let i = 0; i < 2; i++) {
      const endpoint = await api.call('POST', '/webhooks/endpoints', { url: `${receiverOrigin}/hook` }, 201)
      await api.call('POST', '/webhooks/subscriptions', { endpoint_id: endpoint.id, event_types: ['bench.*'] }, 201)
      endpoints.push(endpoint.id)
    }
    const backlog = { client, api, database, receiverOrigin, endpoints, herald }
    await drainBacklog({ ...backlog, n: DEFAULTS.warmup, round: 'W', label: 'warm-up' })
    const rounds = async (tag, label) => {
      const drains = []
      for (let round = 1; round <= DEFAULTS.rounds; round++) drains.push(await drainBacklog({ ...backlog, n: options.backlog, round: `${tag}${round}`, label: `${label}, round ${round}` }))
      return median(drains)
    }
    const empty = await rounds('E', 'drain, empty')
    const load = await loadHistory(client, { accountId: api.accountId, otherId: other.account.id, endpoints, rows: options.history })
    console.log(`history: ${int(options.history)} finished deliveries with their events and attempts written in ${load.writeSeconds.toFixed(1)} s; deliveries table ${load.size}`)
    const kept = await rounds('H', `drain, ${int(options.history)} kept`)
    const lists = {
      unfiltered: await listLatency(api, '/webhooks/deliveries?limit=50'),
      succeeded: await listLatency(api, '/webhooks/deliveries?limit=50&status=succeeded'),
      'endpoint stats, 24 hours': await listLatency(api, `/webhooks/endpoints/${endpoints[0]}/stats`),
      'endpoint stats, 30 days by day': await listLatency(api, `/webhooks/endpoints/${endpoints[0]}/stats?bucket=day&since=${new Date(Date.now() - 30 * DAY_MS).toISOString()}`),
    }
    for (const [name, figures] of Object.entries(lists)) console.log(`list, ${name}: p50 ${formatMs(figures.p50)} ms, p99 ${formatMs(figures.p99)} ms (${DEFAULTS.listRequests} requests, one at a time)`)
    return { empty, kept, lists, load }
  } catch (error) {
    const output = herald.proc.output().trim()
    if (output) console.log(`Herald's output (last lines):\n${output.split('\n').slice(-20).join('\n')}`)
    throw error
  } finally {
    await client.end()
    await herald.proc.stop(15_000)
  }
}

/**
 * `n` pending deliveries, due now, half to each endpoint, written while the endpoints are disabled; then both enabled,
 * timed until the last is succeeded. `round` keeps each backlog's ids apart, between the history's two halves.
 */
async function drainBacklog({ client, api, database, receiverOrigin, endpoints, herald, n, round, label }) {
  for (const endpoint of endpoints) await api.call('PATCH', `/webhooks/endpoints/${endpoint}`, { status: 'disabled' }, 200)
  // The disables' sweeps (StatusSweeps), which hold what is pending, end before the backlog is written: else they could
  // hold some of it, and the drain would time the enables' release of them too.
  while ((await client.query('select 1 from webhook_sweeps where endpoint_id = any($1) limit 1', [endpoints])).rows.length > 0) await sleep(20)
  const vacuumStarted = performance.now()
  await client.query('vacuum analyze')
  const vacuumSeconds = (performance.now() - vacuumStarted) / 1000
  const now = Date.now()
  const id = (prefix) => `'${prefix}_01Y${round}' || lpad(g::text, 22, '0')`
  await client.query('begin')
  await client.query(`insert into events (id, account_id, type, data, created_at, fanned_out_at) select ${id('evt')}, $1, 'bench.backlog', $2, $3, $3 from generate_series(1, $4) g`, [api.accountId, EVENT_DATA, now, n])
  await client.query(
    `insert into webhook_deliveries (id, account_id, event_id, event_type, endpoint_id, status, attempt_count, next_attempt_at, created_at)
     select ${id('dlv')}, $1, ${id('evt')}, 'bench.backlog', (array[$2, $3])[1 + g % 2], 'pending', 0, $4, $4 from generate_series(1, $5) g`,
    [api.accountId, endpoints[0], endpoints[1], now, n],
  )
  await client.query('commit')
  await settle(database)
  const arrivedBefore = (await control(receiverOrigin, 'GET', '/__control/stats')).received
  const indexesBefore = await indexReads(client)
  const databaseBefore = database.serverCpuSeconds()
  const cpu = cpuWindow(herald.proc.pid)
  const started = performance.now()
  await Promise.all(endpoints.map((endpoint) => api.call('PATCH', `/webhooks/endpoints/${endpoint}`, { status: 'active' }, 200)))
  const deadline = started + DEFAULTS.drainTimeoutS * 1000
  while ((await control(receiverOrigin, 'GET', '/__control/stats')).received - arrivedBefore < n) {
    if (performance.now() > deadline) throw new Error(`${label}: not all ${n} deliveries arrived in ${DEFAULTS.drainTimeoutS} s`)
    await sleep(10)
  }
  // Read on the queue's own index: what is still pending of the two endpoints' backlog.
  while (Number((await client.query(`select count(*) as n from webhook_deliveries where endpoint_id = any($1) and status = 'pending'`, [endpoints])).rows[0].n) > 0) {
    if (performance.now() > deadline) throw new Error(`${label}: deliveries still pending after ${DEFAULTS.drainTimeoutS} s`)
    await sleep(5)
  }
  const seconds = (performance.now() - started) / 1000
  const usage = cpu.end()
  const databaseAfter = database.serverCpuSeconds()
  // Backends report their statistics when idle, within a second.
  await sleep(1500)
  const reads = readsPerDelivery(indexesBefore, await indexReads(client), n)
  const databaseUs = databaseBefore !== undefined && databaseAfter !== undefined ? ((databaseAfter - databaseBefore) * 1e6) / n : undefined
  const heraldUs = usage.serverCpu === undefined ? undefined : (usage.serverCpu * seconds * 1e6) / n
  const result = { n, seconds, rate: n / seconds, heraldUs, databaseUs, othersOnServerCore: usage.othersOnServerCore, reads }
  console.log(
    `${label}: ${int(n)} deliveries in ${seconds.toFixed(2)} s = ${int(result.rate)}/s (VACUUM ANALYZE before: ${vacuumSeconds.toFixed(1)} s)` +
      `; CPU per delivery: Herald ${int(heraldUs)} µs, PostgreSQL ${int(databaseUs)} µs; others on Herald's core ${pct(usage.othersOnServerCore)}` +
      `; index entries read per delivery: ${formatReads(reads)}`,
  )
  if (herald.proc.output().includes('"level":50')) console.log("  (Herald logged errors: see its output)")
  return result
}

/** Index entries read so far, per index of the tables the drain touches. */
async function indexReads(client) {
  const { rows } = await client.query(`select indexrelname as name, idx_tup_read as n from pg_stat_user_indexes where relname in ('webhook_deliveries', 'events', 'webhook_attempts', 'webhook_leases', 'webhook_endpoints')`)
  return new Map(rows.map((row) => [row.name, Number(row.n)]))
}

function readsPerDelivery(before, after, n) {
  return [...after]
    .map(([name, count]) => ({ name, perDelivery: (count - (before.get(name) ?? 0)) / n }))
    .filter(({ perDelivery }) => perDelivery >= 0.05)
    .sort((a, b) => b.perDelivery - a.perDelivery)
}

function formatReads(reads) {
  const total = reads.reduce((sum, { perDelivery }) => sum + perDelivery, 0)
  return `${total.toFixed(1)} (${reads.slice(0, 4).map(({ name, perDelivery }) => `${name} ${perDelivery.toFixed(1)}`).join(', ')})`
}

/**
 * `rows` finished deliveries, their events and one attempt each, finished over the last 29 days (inside the default
 * retention): half in the bench account to its two endpoints, with ids older than any backlog's, 1% failed; half in
 * the other account, with newer ids.
 */
async function loadHistory(client, { accountId, otherId, endpoints, rows }) {
  const started = performance.now()
  const now = Date.now()
  const halves = [
    { account: accountId, block: '00', count: Math.ceil(rows / 2), endpoints },
    { account: otherId, block: '02', count: Math.floor(rows / 2), endpoints: ['ep_bench_other_a', 'ep_bench_other_b'] },
  ]
  for (const { account, block, count, endpoints: [first, second] } of halves) {
    if (count === 0) continue
    const id = (prefix) => `'${prefix}_${block}' || lpad(g::text, 24, '0')`
    // $1 the account, $2 now, $3 how many; finished at evenly spread times over the last 29 days, oldest first.
    const finished = `$2 - ${29 * DAY_MS}::bigint + (g::bigint * ${29 * DAY_MS}) / $3`
    const status = `case when g % 100 = 0 then 'failed' else 'succeeded' end`
    const response = `case when g % 100 = 0 then 500 else 204 end`
    const from = 'from generate_series(1, $3) g'
    const params = [account, now, count]
    await client.query(`insert into events (id, account_id, type, data, created_at, fanned_out_at) select ${id('evt')}, $1, 'bench.history', $4, ${finished}, ${finished} ${from}`, [...params, EVENT_DATA])
    await client.query(
      `insert into webhook_deliveries (id, account_id, event_id, event_type, endpoint_id, status, attempt_count, last_attempt_at, last_response_status, finished_at, created_at)
       select ${id('dlv')}, $1, ${id('evt')}, 'bench.history', (array[$4, $5])[1 + g % 2], ${status}, 1, ${finished}, ${response}, ${finished}, ${finished} ${from}`,
      [...params, first, second],
    )
    await client.query(
      `insert into webhook_attempts (delivery_id, number, account_id, started_at, duration_ms, response_status, error, response_excerpt)
       select ${id('dlv')}, 1, $1, ${finished}, 3, ${response}, null, '' ${from}`,
      params,
    )
  }
  // The hourly counts the attempts would have made, for the stats route (webhook_endpoint_hours).
  await client.query(
    `insert into webhook_endpoint_hours (endpoint_id, hour, account_id, succeeded, failed, errored, duration_ms_sum, duration_ms_max)
     select endpoint_id, finished_at - finished_at % 3600000, account_id, count(*) filter (where status = 'succeeded'), count(*) filter (where status = 'failed'), 0, 3 * count(*), 3
     from webhook_deliveries where account_id = $1 and event_type = 'bench.history' group by 1, 2, 3
     on conflict (endpoint_id, hour) do update set succeeded = webhook_endpoint_hours.succeeded + excluded.succeeded, failed = webhook_endpoint_hours.failed + excluded.failed,
       duration_ms_sum = webhook_endpoint_hours.duration_ms_sum + excluded.duration_ms_sum`,
    [accountId],
  )
  const writeSeconds = (performance.now() - started) / 1000
  const size = (await client.query(`select pg_size_pretty(pg_total_relation_size('webhook_deliveries')) as size`)).rows[0].size
  return { writeSeconds, size }
}

async function listLatency(api, pathname) {
  for (let i = 0; i < 10; i++) await api.call('GET', pathname, undefined, 200)
  const times = []
  for (let i = 0; i < DEFAULTS.listRequests; i++) {
    const started = performance.now()
    const page = await api.call('GET', pathname, undefined, 200)
    times.push(performance.now() - started)
    if (page.data.length === 0 || (page.data[0].succeeded !== undefined && !page.data.some((bucket) => bucket.succeeded > 0))) throw new Error(`${pathname}: an empty page`)
  }
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99) }
}

function printTable({ empty, kept, lists }, options) {
  const ratio = kept.rate / empty.rate
  const perCpu = (drain) => (drain.heraldUs ? 1e6 / drain.heraldUs : undefined)
  const cpuRatio = perCpu(kept) && perCpu(empty) ? perCpu(kept) / perCpu(empty) : undefined
  const drainRow = (label, drain) => [label, int(drain.rate), int(perCpu(drain)), `${int(drain.heraldUs)} / ${int(drain.databaseUs)}`, formatReads(drain.reads), '']
  const rows = [
    drainRow('drain, empty database (deliveries/s)', empty),
    drainRow(`drain, ${int(options.history)} finished kept`, kept),
    ['  ratio, kept / empty', `${ratio.toFixed(2)}×`, cpuRatio === undefined ? '–' : `${cpuRatio.toFixed(2)}×`, '', '', `≥ ${GOAL_RATIO}×: ${ratio >= GOAL_RATIO ? 'met' : 'MISSED'}`],
    ['list, first page p50 / p99 (ms)', `${formatMs(lists.unfiltered.p50)} / ${formatMs(lists.unfiltered.p99)}`, '', '', '', ''],
    ['list, status=succeeded p50 / p99 (ms)', `${formatMs(lists.succeeded.p50)} / ${formatMs(lists.succeeded.p99)}`, '', '', '', ''],
    ...['endpoint stats, 24 hours', 'endpoint stats, 30 days by day'].map((name) => {
      const { p50, p99 } = lists[name]
      return [`${name} p50 / p99 (ms)`, `${formatMs(p50)} / ${formatMs(p99)}`, '', '', '', `p99 < ${STATS_GOAL_MS} ms: ${p99 < STATS_GOAL_MS ? 'met' : 'MISSED'}`]
    }),
  ]
  const headers = ['figure', 'herald', 'per Herald CPU-s', 'CPU µs/delivery: Herald / PG', 'index entries read per delivery', 'goal']
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => String(row[i]).length)))
  const format = (row) => row.map((cell, i) => (i >= 1 && i <= 3 ? String(cell).padStart(widths[i]) : String(cell).padEnd(widths[i]))).join('  ').trimEnd()
  console.log(`\nthe drain beside the history kept (PostgreSQL, backlog ${int(options.backlog)} to two endpoints, max_in_flight at its default; the median of ${DEFAULTS.rounds} rounds each):`)
  console.log(`  ${format(headers)}`)
  for (const row of rows) console.log(`  ${format(row)}`)
  console.log(`  lists: the bench account (${int(Math.ceil(options.history / 2))} older rows and the backlogs) beside another account's ${int(Math.floor(options.history / 2))} newer rows`)
  const busy = Math.max(...[empty, kept].map((drain) => drain.othersOnServerCore ?? 0))
  if (busy > 0.1) console.log(`  other processes (PostgreSQL's included) used up to ${pct(busy)} of Herald's core in these drains: per Herald CPU-s is the steadier figure`)
}

/** The drain of median rate among `drains`. */
function median(drains) {
  return [...drains].sort((a, b) => a.rate - b.rate)[Math.floor(drains.length / 2)]
}

function pct(value) {
  return value === undefined ? 'n/a' : `${Math.round(value * 100)}%`
}

function int(value) {
  return value === undefined ? '–' : Math.round(value).toLocaleString('en-US')
}
