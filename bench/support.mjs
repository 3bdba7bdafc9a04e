// Helpers shared by the benchmarks: child processes pinned to a core, an HTTP readiness wait, autocannon runs
// that fail loudly, CPU accounting from /proc and a CPU-profile summary. Everything is bounded in time.
import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { createServer } from 'node:net'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath, pathToFileURL } from 'node:url'
import autocannon from 'autocannon'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** The core the servers under test get, and the one the load generator keeps. */
export const SERVER_CORE = 1
export const LOAD_CORE = 0

const hasTaskset = spawnSync('taskset', ['--version'], { stdio: 'ignore' }).status === 0

export function pinningAvailable() {
  return hasTaskset
}

/** Pins every thread of this process (the load generator) to `core`; a no-op without taskset. */
export function pinSelf(core) {
  if (!hasTaskset) return false
  return spawnSync('taskset', ['-a', '-c', '-p', String(core), String(process.pid)], { stdio: 'ignore' }).status === 0
}

/** The environment `herald serve` (or Herald in-process) runs with in a benchmark: fresh secrets, logging off. */
export function heraldEnv(port, databaseUrl, extra = {}) {
  return {
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: databaseUrl,
    HERALD_SECRET_KEY: randomBytes(32).toString('base64'),
    HERALD_OPERATOR_TOKEN: randomBytes(32).toString('base64url'),
    LOG_LEVEL: 'silent',
    NODE_ENV: '',
    ...extra,
  }
}

/**
 * Herald's own modules (dist/) in this process, serving on `env.PORT` as `herald serve` does, its background work
 * (the change feed's reads among it) included, so that what it sends to the database can be counted here.
 */
export async function startHeraldInProcess(env) {
  const dist = (file) => import(pathToFileURL(path.join(ROOT, 'dist', file)).href)
  const [{ openHerald }, { buildServer }, { loadConfig }, { createLogger }] = await Promise.all(
    ['herald.js', 'server.js', 'platform/config.js', 'platform/logger.js'].map(dist),
  )
  const herald = await openHerald({ config: loadConfig(env), log: createLogger('silent') })
  await herald.startBackgroundWork()
  const app = await buildServer(herald)
  try {
    await app.listen({ port: Number(env.PORT), host: '127.0.0.1' })
  } catch (error) {
    await herald.close()
    throw error
  }
  return {
    origin: `http://127.0.0.1:${env.PORT}`,
    async close() {
      await app.close()
      await herald.close()
    },
  }
}

/**
 * Counts, by SQL text, the statements this process runs on a database while `start()`ed: each run of a
 * better-sqlite3 statement and each `exec`, and each pg `Client#query` (a pool's clients are pg.Client). It counts
 * runs, not prepares: Herald prepares each SQLite text once and reuses it. `restore()` puts the drivers back.
 */
export async function statementCounter() {
  const [{ default: SQLite }, { default: pg }] = await Promise.all([import('better-sqlite3'), import('pg')])
  const statements = new Map()
  let counting = false
  const undo = []
  const count = (owner, name, sourceOf) => {
    const original = owner[name]
    owner[name] = function counted(...args) {
      if (counting) {
        const source = sourceOf(this, args[0])
        statements.set(source, (statements.get(source) ?? 0) + 1)
      }
      return original.apply(this, args)
    }
    undo.push(() => {
      owner[name] = original
    })
  }
  // better-sqlite3 exports no Statement class: its prototype is that of any prepared statement.
  const probe = new SQLite(':memory:')
  const Statement = Object.getPrototypeOf(probe.prepare('select 1'))
  probe.close()
  for (const name of ['run', 'get', 'all', 'iterate']) count(Statement, name, (statement) => statement.source)
  count(SQLite.prototype, 'exec', (_db, source) => source)
  count(pg.Client.prototype, 'query', (_client, query) => (typeof query === 'string' ? query : query?.text))
  return {
    /** SQL text → times run while counting. */
    statements,
    start() {
      counting = true
    },
    stop() {
      counting = false
    },
    total() {
      let sum = 0
      for (const times of statements.values()) sum += times
      return sum
    },
    restore() {
      counting = false
      for (const put of undo) put()
    },
  }
}

/** RFC 6749 §2.3.1: both parts form-urlencoded, then base64. */
export function basic(id, secret) {
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`
}

export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

/** Children started by this process, killed (each by its own pid) if the bench exits without stopping them. */
const children = new Set()
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})
// Interrupted (Ctrl-C, a timeout's SIGTERM): exit through the handler above rather than leave the children behind.
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => process.exit(signal === 'SIGINT' ? 130 : 143))

/**
 * Starts `node <args>` as a child, pinned to `core` with taskset when available (taskset execs node, so the
 * pid is node's). Output is kept (bounded) for the error message if the child dies early.
 */
export function startNode(name, args, { env = {}, core = SERVER_CORE, nodeFlags = [] } = {}) {
  const command = hasTaskset ? 'taskset' : process.execPath
  const argv = hasTaskset ? ['-c', String(core), process.execPath, ...nodeFlags, ...args] : [...nodeFlags, ...args]
  const child = spawn(command, argv, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  children.add(child)
  child.once('exit', () => children.delete(child))
  let output = ''
  const keep = (chunk) => {
    output = (output + chunk.toString('utf8')).slice(-8000)
  }
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  return {
    name,
    child,
    pid: child.pid,
    exited,
    output: () => output,
    /** Resolves with the first stdout line that parses as JSON, within `timeoutMs`. */
    async firstJsonLine(timeoutMs) {
      const deadline = Date.now() + timeoutMs
      while (Date.now() < deadline) {
        for (const line of output.split('\n')) {
          let value
          try {
            value = JSON.parse(line)
          } catch {
            continue
          }
          if (value && typeof value === 'object') return value
        }
        if (child.exitCode !== null) break
        await sleep(50)
      }
      throw new Error(`${name} did not report readiness within ${timeoutMs} ms (exit ${child.exitCode}):\n${output}`)
    },
    /** SIGTERM, then SIGKILL of this child alone if it has not exited within `timeoutMs`. */
    async stop(timeoutMs = 5000) {
      if (child.exitCode !== null || child.signalCode !== null) return exited
      child.kill('SIGTERM')
      const result = await Promise.race([exited, sleep(timeoutMs).then(() => undefined)])
      if (result) return result
      child.kill('SIGKILL')
      return exited
    },
  }
}

/** Polls `url` until it answers 200, within `timeoutMs`; fails with the child's output otherwise. */
export async function waitForHttp(url, timeoutMs, proc) {
  const deadline = Date.now() + timeoutMs
  let last
  while (Date.now() < deadline) {
    if (proc && proc.child.exitCode !== null) break
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1000) })
      if (response.status === 200) return
      last = `HTTP ${response.status}`
    } catch (error) {
      last = error.message
    }
    await sleep(100)
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms (${last}).${proc ? `\n${proc.name} output:\n${proc.output()}` : ''}`)
}

/** user+system CPU seconds of a process so far, from /proc (Linux); undefined elsewhere. */
export function cpuSeconds(pid) {
  const stat = readStat(pid)
  return stat && stat.ticks / clockTicksPerSecond()
}

/**
 * user+system CPU seconds so far of every running process whose command is `command` (a database server's
 * backends and helpers), with that of their children that have exited, summed; undefined when there is none, as
 * with a server on another machine. Counting the exited children keeps a backend that ends during a measurement
 * (a pool closing an idle connection) from taking its CPU with it: the server's main process, which waits for
 * its backends, adds theirs to its children's count.
 */
export function cpuSecondsOfCommand(command) {
  if (!existsSync('/proc')) return undefined
  let ticks
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const stat = readStat(entry)
    if (stat?.command === command) ticks = (ticks ?? 0) + stat.ticks + stat.childTicks
  }
  return ticks === undefined ? undefined : ticks / clockTicksPerSecond()
}

/**
 * A process's command, its user+system CPU ticks, and those of its children it has waited for, from
 * /proc/<pid>/stat; undefined if it is gone.
 */
function readStat(pid) {
  let stat
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  // The command is in parentheses and may hold spaces; utime, stime, cutime and cstime are fields 14 to 17, after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return {
    command: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
    ticks: Number(fields[11]) + Number(fields[12]),
    childTicks: Number(fields[13]) + Number(fields[14]),
  }
}

/** Busy and total ticks per core, from /proc/stat (Linux); undefined elsewhere. */
export function coreTicks() {
  if (!existsSync('/proc/stat')) return undefined
  const cores = new Map()
  for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
    const match = /^cpu(\d+) (.*)$/.exec(line)
    if (!match) continue
    // user nice system idle iowait irq softirq steal …: idle and iowait are not busy.
    const values = match[2].trim().split(/\s+/).map(Number)
    const total = values.slice(0, 8).reduce((sum, value) => sum + value, 0)
    cores.set(Number(match[1]), { busy: total - values[3] - values[4], total })
  }
  return cores
}

/**
 * On a shared machine other processes come and go: before a measured round, wait (at most `maxMs`) until
 * neither benchmark core is busier than `threshold` while nothing is under load. Returns the last busy shares.
 */
export async function waitForQuiet(maxMs, threshold = 0.15) {
  const deadline = Date.now() + maxMs
  let shares
  do {
    const before = coreTicks()
    if (!before) return undefined
    await sleep(500)
    const after = coreTicks()
    shares = [busyShare(before, after, SERVER_CORE) ?? 0, busyShare(before, after, LOAD_CORE) ?? 0]
    if (Math.max(...shares) <= threshold) return { quiet: true, shares }
  } while (Date.now() < deadline)
  return { quiet: false, shares }
}

/**
 * Starts a CPU accounting window over whatever runs next (not only autocannon): `end()` answers the CPU the
 * process `pid` used, in cores, and the busy share of each benchmark core that was not this process's nor
 * `pid`'s, i.e. other processes competing for it (undefined where /proc is missing).
 */
export function cpuWindow(pid) {
  const started = process.hrtime.bigint()
  const before = { server: pid && cpuSeconds(pid), self: cpuSeconds(process.pid), cores: coreTicks() }
  return {
    end() {
      const elapsed = Number(process.hrtime.bigint() - started) / 1e9
      const server = pid && cpuSeconds(pid)
      const self = cpuSeconds(process.pid)
      const cores = coreTicks()
      const serverCpu = before.server !== undefined && server !== undefined ? (server - before.server) / elapsed : undefined
      const selfCpu = before.self !== undefined && self !== undefined ? (self - before.self) / elapsed : undefined
      const serverCore = busyShare(before.cores, cores, SERVER_CORE)
      const loadCore = busyShare(before.cores, cores, LOAD_CORE)
      return {
        seconds: elapsed,
        serverCpu,
        serverCore,
        loadCore,
        othersOnServerCore: serverCore !== undefined && serverCpu !== undefined ? Math.max(0, serverCore - serverCpu) : undefined,
        othersOnLoadCore: loadCore !== undefined && selfCpu !== undefined ? Math.max(0, loadCore - selfCpu) : undefined,
      }
    },
  }
}

/** The share of `core` that was busy between two coreTicks() readings, 0..1. */
function busyShare(before, after, core) {
  const a = before?.get(core)
  const b = after?.get(core)
  if (!a || !b || b.total === a.total) return undefined
  return (b.busy - a.busy) / (b.total - a.total)
}

let ticksPerSecond
function clockTicksPerSecond() {
  if (ticksPerSecond === undefined) {
    const result = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' })
    ticksPerSecond = Number(result.stdout.trim()) || 100
  }
  return ticksPerSecond
}

/**
 * One autocannon run, bounded by `seconds`. Throws if any response was not 2xx or any connection failed:
 * a figure made of error responses would be meaningless.
 */
/** `requests` (autocannon's, e.g. with a `setupRequest` per request) replaces the fixed `headers` and `body`. */
export async function load({ label, url, headers, body, requests, connections, seconds, pid }) {
  const cpuBefore = pid && cpuSeconds(pid)
  const selfBefore = cpuSeconds(process.pid)
  const coresBefore = coreTicks()
  const started = process.hrtime.bigint()
  const result = await autocannon({
    url,
    method: 'POST',
    headers,
    body,
    requests,
    connections,
    pipelining: 1,
    duration: seconds,
    timeout: 10,
  })
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9
  const cpuAfter = pid && cpuSeconds(pid)
  const selfAfter = cpuSeconds(process.pid)
  const coresAfter = coreTicks()
  const failures = []
  if (result.non2xx > 0) failures.push(`${result.non2xx} non-2xx responses`)
  if (result.errors > 0) failures.push(`${result.errors} connection errors`)
  if (result.timeouts > 0) failures.push(`${result.timeouts} timeouts`)
  if (result['2xx'] === 0) failures.push('no successful response at all')
  if (failures.length > 0) throw new Error(`${label}: ${failures.join(', ')} — refusing to report figures`)
  const serverCpu = cpuBefore !== undefined && cpuAfter !== undefined ? (cpuAfter - cpuBefore) / elapsed : undefined
  const loadCpu = selfBefore !== undefined && selfAfter !== undefined ? (selfAfter - selfBefore) / elapsed : undefined
  const serverCore = busyShare(coresBefore, coresAfter, SERVER_CORE)
  const loadCore = busyShare(coresBefore, coresAfter, LOAD_CORE)
  return {
    label,
    ok: result['2xx'],
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    /** CPU the server process used, in cores (1 = one core all the time). */
    serverCpu,
    /** Tokens per CPU-second of the server: what it costs, whatever else competed for the core. */
    perCpuSecond: serverCpu ? result['2xx'] / (serverCpu * elapsed) : undefined,
    /** Busy share of the server's core not used by the server: other processes competing for it. */
    othersOnServerCore: serverCore !== undefined && serverCpu !== undefined ? Math.max(0, serverCore - serverCpu) : undefined,
    /** Busy share of the load generator's core not used by this process. */
    othersOnLoadCore: loadCore !== undefined && loadCpu !== undefined ? Math.max(0, loadCore - loadCpu) : undefined,
  }
}

/** Decodes a compact JWS's header and payload, without verifying: only to check what a sample looks like. */
export function decodeJwt(token) {
  const [header, payload, signature] = String(token).split('.')
  if (!header || !payload || !signature) throw new Error(`not a compact JWS: ${String(token).slice(0, 40)}…`)
  return {
    header: JSON.parse(Buffer.from(header, 'base64url').toString('utf8')),
    payload: JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')),
  }
}

/**
 * Self time per function of a V8 .cpuprofile, highest first, and per "area" (a package under node_modules,
 * Herald's dist/, node internals, or V8's own pseudo-frames such as (garbage collector)). With `window`
 * ({ fromUs, toUs } on the monotonic clock, which V8's profiler and process.hrtime share on Linux, or a list of
 * them), only the samples taken inside it count, so start-up and set-up are left out.
 */
export function summarizeProfile(file, { top = 25, window } = {}) {
  const windows = window === undefined ? undefined : [window].flat()
  const profile = JSON.parse(readFileSync(file, 'utf8'))
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfMicros = new Map()
  const { samples, timeDeltas } = profile
  let at = profile.startTime
  let inWindow = 0
  for (let i = 0; i < samples.length; i++) {
    at += timeDeltas[i] ?? 0
    if (windows && !windows.some(({ fromUs, toUs }) => at >= fromUs && at <= toUs)) continue
    inWindow++
    // A sample stands for the time until the next one.
    const delta = timeDeltas[i + 1] ?? 0
    selfMicros.set(samples[i], (selfMicros.get(samples[i]) ?? 0) + delta)
  }
  const functions = new Map()
  const areas = new Map()
  let total = 0
  for (const [id, micros] of selfMicros) {
    const { callFrame } = byId.get(id)
    const where = callFrame.url ? `${shortUrl(callFrame.url)}:${callFrame.lineNumber + 1}` : ''
    const key = `${callFrame.functionName || '(anonymous)'} ${where}`.trim()
    functions.set(key, (functions.get(key) ?? 0) + micros)
    const area = areaOf(callFrame)
    areas.set(area, (areas.get(area) ?? 0) + micros)
    total += micros
  }
  const rank = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .map(([name, micros]) => ({ name, micros, share: micros / total }))
  return { totalMicros: total, samples: inWindow, functions: rank(functions).slice(0, top), areas: rank(areas) }
}

function shortUrl(url) {
  const text = url.startsWith('file://') ? fileURLToPath(url) : url
  const modules = text.lastIndexOf('/node_modules/')
  if (modules >= 0) return text.slice(modules + '/node_modules/'.length)
  return text.startsWith(ROOT) ? path.relative(ROOT, text) : text
}

function areaOf(callFrame) {
  const { url, functionName } = callFrame
  if (!url) return functionName.startsWith('(') ? functionName : '(native / builtins)'
  const text = url.startsWith('file://') ? fileURLToPath(url) : url
  const modules = text.lastIndexOf('/node_modules/')
  if (modules >= 0) {
    const rest = text.slice(modules + '/node_modules/'.length).split('/')
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]
  }
  if (text.startsWith('node:')) return 'node: internals'
  if (text.startsWith(path.join(ROOT, 'dist'))) return 'herald (dist/)'
  return text
}

export function formatMs(value) {
  return value === undefined ? '–' : value < 10 ? value.toFixed(2) : value.toFixed(1)
}

export function mean(values) {
  return values.reduce((sum, value) => sum + value, 0) / values.length
}
