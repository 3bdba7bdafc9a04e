// Refresh-token rotations per second (issue 24): Herald on SQLite and on PostgreSQL (`herald serve` from dist/, pinned
// to one core) beside oidc-provider rotating its refresh tokens in the same run (rotateRefreshToken, in memory as it
// ships), and beside a floor on each database: the bare writes of one rotation through the driver
// (bench/refresh-floor.mjs). The servers, rounds, sign-in and statement counter are bench/code-flow.mjs's.
//
// Before measuring, each worker signs in once through the full code flow (openid offline_access, prompt=consent,
// which oidc-provider needs to grant offline_access) and keeps the refresh token: each worker then rotates its own
// chain, one refresh after another (grant_type=refresh_token, client_secret_basic), every answer carrying the next
// token, an ES256 access token and an RS256 ID token. Then Herald in-process on each database, with every SQL
// statement counted, for the statements one rotation costs.
//
//   npm run bench -- refresh                       both databases, the peer and the floors, about 2 minutes
//   npm run bench -- refresh --seconds 5           shorter rounds (a smoke run)
//   npm run bench -- refresh --dialect postgres    one database
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import {
  DEFAULTS,
  REDIRECT_URI,
  ROUNDS,
  WARMUP_SECONDS,
  compare,
  countStatements,
  heraldTarget,
  parseArgs,
  pct,
  peerTarget,
  printSetup,
  printStatements,
  summarize,
} from './code-flow.mjs'
import { rotationFloor } from './refresh-floor.mjs'
import { decodeJwt, formatMs } from './support.mjs'

/** What the sign-ins ask for: refresh tokens need offline_access, and oidc-provider grants it only with prompt=consent. */
const REQUEST = {
  client: { grant_types: ['authorization_code', 'refresh_token'], scope: 'openid profile email offline_access' },
  scope: 'openid offline_access',
  params: { prompt: 'consent' },
}
/** Herald's goal (issue 24): at least oidc-provider's rate, its own rotations durable. */
const GOAL = 1

export const USAGE = `Usage: npm run bench -- refresh [--seconds N] [--concurrency N] [--dialect sqlite|postgres]

  (no flag)         refresh-token rotations per second: Herald on SQLite and on PostgreSQL beside oidc-provider
                    (rotateRefreshToken), ${ROUNDS} alternating rounds of ${DEFAULTS.seconds} s after ${WARMUP_SECONDS} s warm-up, ${DEFAULTS.concurrency} chains rotated at
                    once (one per worker, each from its own sign-in); then the bare rotation writes on each database
                    (the floor), and SQL statements per rotation (Herald in-process)
  --seconds N       each round's length (the warm-up, the floor and the count take at most that too)
  --concurrency N   chains rotated at once
  --dialect NAME    sqlite or postgres only
PostgreSQL: HERALD_BENCH_POSTGRES_URL, a fresh database per run, dropped after.`

export async function main(args) {
  const options = parseArgs(args, USAGE)
  if (typeof options === 'string') return 2
  printSetup('the client, the browser and login app of the sign-ins, and the floor')
  const work = mkdtempSync(path.join(tmpdir(), 'herald-bench-refresh-'))
  try {
    const job = rotations(options)
    const { rounds, floors } = await compare(work, options, job)
    const counts = new Map()
    for (const dialect of options.dialects) counts.set(dialect, await countStatements(work, dialect, options, job))
    printSummary(rounds, floors, counts, options)
    return 0
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

/** Rotation as a job for compare() and countStatements(): each target signs in once per worker, then rotates. */
function rotations(options) {
  return {
    unit: 'rotations',
    peerEnv: { REDIRECT_URI, REFRESH: '1' },
    herald: async (http, origin, operatorToken, name, extra) => chains(await heraldTarget(http, origin, operatorToken, name, { ...extra, request: REQUEST }), options.concurrency),
    peer: async (http, peer) => chains(peerTarget(http, peer, REQUEST), options.concurrency),
    check: checkRotation,
    floor: rotationFloor,
  }
}

/**
 * `signIn`'s target turned into `workers` chains: one sign-in each, now, then `flow(worker)` rotates that worker's
 * refresh token and keeps the successor. A spare chain is for the check, which ends it by reusing a spent token.
 */
async function chains(signIn, workers) {
  const signedIn = async () => {
    const answer = await signIn.flow()
    if (typeof answer.refresh_token !== 'string') throw new Error(`${signIn.name}: the sign-in answered no refresh token (scope ${answer.scope})`)
    return answer.refresh_token
  }
  const tokens = []
  for (let i = 0; i < workers; i++) tokens.push(await signedIn())
  const rotate = async (token) => {
    const answer = (await signIn.refresh(token, 200)).json
    if (typeof answer.refresh_token !== 'string' || answer.refresh_token === token) throw new Error(`${signIn.name}: a refresh answered no new refresh token`)
    return answer
  }
  return {
    ...signIn,
    requestsPerFlow: 1,
    async flow(worker) {
      const answer = await rotate(tokens[worker])
      tokens[worker] = answer.refresh_token
      return answer
    },
    /** A chain of its own, rotated once: the answer, and the spent token, still the server's to reject. */
    async spare() {
      const spent = await signedIn()
      return { answer: await rotate(spent), spent }
    },
  }
}

/**
 * One rotation outside the measurement, its answer checked (an ES256 at+jwt access token, an RS256 ID token for the
 * client, a new refresh token); then the spent token again, which both must refuse with invalid_grant (reuse).
 */
async function checkRotation(target) {
  const { answer, spent } = await target.spare()
  const problems = []
  const access = decodeJwt(answer.access_token)
  if (access.header.alg !== 'ES256' || access.header.typ !== 'at+jwt') problems.push(`access token ${access.header.alg} ${access.header.typ}`)
  const id = answer.id_token === undefined ? undefined : decodeJwt(answer.id_token)
  if (id?.header.alg !== 'RS256') problems.push(`ID token ${id?.header.alg ?? 'missing'}`)
  else if (id.payload.iss !== target.issuer || ![id.payload.aud].flat().includes(target.clientId)) problems.push(`ID token iss ${id.payload.iss} aud ${JSON.stringify(id.payload.aud)}`)
  const reused = await target.refresh(spent)
  if (reused.status !== 400 || JSON.parse(reused.text).error !== 'invalid_grant') problems.push(`a spent refresh token answered ${reused.status} ${reused.text.slice(0, 100)}`)
  if (problems.length > 0) throw new Error(`${target.name}: the sample rotation is not the expected job: ${problems.join(', ')}`)
  console.log(
    `sample ${target.name.padEnd(16)} rotated: access token ${access.header.alg} ${access.header.typ} scope ${JSON.stringify(access.payload.scope ?? answer.scope)}; ` +
      `ID token ${id.header.alg}, sub ${id.payload.sub}; the spent token refused (invalid_grant)`,
  )
}

function printSummary(rounds, floors, counts, options) {
  console.log(`\nrefresh-token rotations, ${options.concurrency} chains at once, ${ROUNDS} rounds × ${options.seconds} s:`)
  console.log(`  ${'target'.padEnd(16)} ${'rotations/s'.padStart(12)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'server CPU ms/rotation'.padStart(23)}  rounds (rotations/s)`)
  const summary = new Map()
  for (const [name, results] of rounds) {
    const row = summarize(results)
    summary.set(name, row)
    const cpu = row.cpuMs === undefined ? 'n/a' : `${row.cpuMs.toFixed(3)}${row.databaseMs === undefined ? '' : ` + PG ${row.databaseMs.toFixed(3)}`}`
    console.log(
      `  ${name.padEnd(16)} ${row.flowsPerSecond.toFixed(1).padStart(12)} ${formatMs(row.p50).padStart(8)} ${formatMs(row.p99).padStart(8)} ${cpu.padStart(23)}  ${results.map((r) => r.flowsPerSecond.toFixed(1)).join(' / ')}`,
    )
  }
  for (const [dialect, floor] of floors) {
    console.log(`  ${`floor ${dialect}`.padEnd(16)} ${floor.rotationsPerSecond.toFixed(1).padStart(12)} ${formatMs(floor.p50).padStart(8)} ${formatMs(floor.p99).padStart(8)} ${'(this process)'.padStart(23)}  ${floor.inFlight} at once`)
  }
  console.log("  (p50 and p99 of each rotation's request; PG: all PostgreSQL processes, other users' included; floor: update + insert through the driver, in one transaction on SQLite and one statement on PostgreSQL)")
  const peer = summary.get('oidc-provider')
  for (const dialect of options.dialects) {
    const herald = summary.get(`herald ${dialect}`)
    if (!herald) continue
    const ratio = herald.flowsPerSecond / peer.flowsPerSecond
    const perCpu = herald.cpuMs && peer.cpuMs ? `, ${(peer.cpuMs / herald.cpuMs).toFixed(2)}× rotations per server CPU-second` : ''
    const floor = floors.get(dialect)
    console.log(
      `  herald ${dialect}: ${ratio.toFixed(2)}× oidc-provider's rotations/s${perCpu} (goal ≥ ${GOAL}×: ${ratio >= GOAL ? 'met' : 'not met'})` +
        (floor ? `; ${(herald.flowsPerSecond / floor.rotationsPerSecond).toFixed(2)}× the floor's` : ''),
    )
  }
  console.log('  (oidc-provider in memory, its default adapter: its rotations are not durable; Herald commits each one)')
  const contended = Math.max(0, ...[...summary.values()].map((row) => row.others))
  if (contended > 0.1) {
    console.log(`  WARNING: other processes used up to ${pct(contended)} of a core on the benchmark's two during a round; re-run on a quiet machine for the headline figure.`)
  }
  printStatements(counts, 'rotation', options)
}
