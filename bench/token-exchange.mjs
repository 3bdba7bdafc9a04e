// Token exchange (RFC 8693) beside client_credentials on the same Herald process in the same run: a gateway client
// exchanges a client_credentials access token (delegation, `act` naming it) for an ES256 token for the same resource
// and scope, which also verifies the subject token and checks its revocation (no endpoint subscribes to
// `oauth.token.exchanged`, so no event is written). The
// server is pinned to one core and autocannon drives it from another, alternating the two grants round by round.
//
//   npm run bench -- token-exchange      (about a minute and a half)
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import path from 'node:path'
import { LOAD_CORE, SERVER_CORE, basic, decodeJwt, formatMs, load, mean, pinSelf, pinningAvailable, waitForQuiet } from './support.mjs'
import { RESOURCE, SCOPE, call, startHeraldProcess } from './tokens.mjs'

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange'
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token'
const CONNECTIONS = 50
const WARMUP_SECONDS = 3
const ROUND_SECONDS = 10
const ROUNDS = 3
const QUIET_WAIT_MS = 3000
/** The issue's target: token exchange issues at least this share of the client_credentials rate. */
const TARGET_RATIO = 0.8

export const USAGE = `Usage: npm run bench -- token-exchange

  token exchange vs client_credentials on one Herald process (SQLite), ${ROUNDS} alternating rounds of ${ROUND_SECONDS} s each
  after ${WARMUP_SECONDS} s warm-up, ${CONNECTIONS} connections; prints both rates and their ratio (target ≥ ${TARGET_RATIO})`

export async function main(args) {
  if (args.length > 0) {
    console.error(`unknown argument: ${args.join(' ')}\n\n${USAGE}`)
    return 2
  }
  const pinned = pinSelf(LOAD_CORE)
  console.log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}`)
  console.log(pinningAvailable() && pinned ? `Herald pinned to core ${SERVER_CORE}, autocannon on core ${LOAD_CORE}` : 'taskset unavailable: NOT pinned, figures are noisier')
  const work = mkdtempSync(path.join(tmpdir(), 'herald-bench-'))
  const herald = await startHeraldProcess(work)
  try {
    const targets = [herald.target, await exchangeTarget(herald)]
    targets[0].name = 'client_credentials'
    for (const target of targets) await checkSample(target)
    for (const target of targets) await load({ ...target.request, label: `${target.name} warm-up`, connections: CONNECTIONS, seconds: WARMUP_SECONDS, pid: target.pid })
    const rounds = new Map(targets.map((target) => [target.name, []]))
    for (let round = 1; round <= ROUNDS; round++) {
      for (const target of targets) {
        await waitForQuiet(QUIET_WAIT_MS)
        const result = await load({ ...target.request, label: `${target.name} round ${round}`, connections: CONNECTIONS, seconds: ROUND_SECONDS, pid: target.pid })
        rounds.get(target.name).push(result)
        console.log(`  round ${round} ${target.name.padEnd(18)} ${result.rps.toFixed(0).padStart(7)} req/s  p50 ${formatMs(result.p50)} ms  p99 ${formatMs(result.p99)} ms  ${result.perCpuSecond?.toFixed(0) ?? 'n/a'} tokens/CPU-s`)
      }
    }
    printComparison(rounds)
    return 0
  } finally {
    await herald.stop()
    rmSync(work, { recursive: true, force: true })
  }
}

/** A gateway client allowed the grant, exchanging one client_credentials token of the benchmark's client. */
async function exchangeTarget(herald) {
  const { client } = herald
  const bearer = { authorization: `Bearer ${client.managementToken}` }
  const gateway = await call('POST', `${client.issuer}/oauth/clients`, bearer, { client_name: 'gateway', grant_types: [TOKEN_EXCHANGE], token_endpoint_auth_method: 'client_secret_basic', scope: SCOPE, audience: [RESOURCE] }, 201)
  const subject = await call('POST', client.tokenEndpoint, { authorization: basic(client.clientId, client.clientSecret) }, new URLSearchParams({ grant_type: 'client_credentials', scope: SCOPE }), 200)
  const body = new URLSearchParams({ grant_type: TOKEN_EXCHANGE, subject_token: subject.access_token, subject_token_type: ACCESS_TOKEN_TYPE, scope: SCOPE }).toString()
  return {
    name: 'token-exchange',
    pid: herald.target.pid,
    request: { url: client.tokenEndpoint, headers: { authorization: basic(gateway.client_id, gateway.client_secret), 'content-type': 'application/x-www-form-urlencoded' }, body },
  }
}

/** One request outside the measurement: an ES256 `at+jwt` for the resource and scope (and for the exchange, an `act`). */
async function checkSample(target) {
  const { url, headers, body } = target.request
  const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(5000) })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`${target.name}: sample answered ${response.status}: ${text}`)
  const { header, payload } = decodeJwt(JSON.parse(text).access_token)
  const exchange = target.name === 'token-exchange'
  if (header.alg !== 'ES256' || payload.aud !== RESOURCE || payload.scope !== SCOPE || (exchange && !payload.act)) {
    throw new Error(`${target.name}: sample token is not the expected job: ${JSON.stringify({ header, payload })}`)
  }
  console.log(`sample ${target.name.padEnd(18)} 200, ${header.alg} ${header.typ}, aud ${payload.aud}, scope ${payload.scope}${exchange ? `, act ${JSON.stringify(payload.act)}` : ''}`)
}

function printComparison(rounds) {
  const perCpu = (results) => (results.every((r) => r.perCpuSecond !== undefined) ? mean(results.map((r) => r.perCpuSecond)) : undefined)
  const rows = new Map([...rounds].map(([name, results]) => [name, { rps: mean(results.map((r) => r.rps)), p99: mean(results.map((r) => r.p99)), perCpu: perCpu(results), results }]))
  console.log(`\ntoken issuance on one Herald process (means over ${ROUNDS} rounds):`)
  for (const [name, row] of rows) {
    console.log(
      `  ${name.padEnd(18)} ${row.rps.toFixed(0).padStart(7)} req/s  p99 ${formatMs(row.p99)} ms  ${row.perCpu?.toFixed(0) ?? 'n/a'} tokens/CPU-s  rounds ${row.results.map((r) => r.rps.toFixed(0)).join(' / ')}`,
    )
  }
  const exchange = rows.get('token-exchange')
  const credentials = rows.get('client_credentials')
  const ratio = exchange.rps / credentials.rps
  const cpuRatio = exchange.perCpu && credentials.perCpu ? `, ${(exchange.perCpu / credentials.perCpu).toFixed(2)}× tokens per CPU-second` : ''
  console.log(`  ratio token-exchange / client_credentials: ${ratio.toFixed(2)}× req/s${cpuRatio} (target ≥ ${TARGET_RATIO}× req/s)`)
  if (ratio < TARGET_RATIO) console.log(`  BELOW TARGET: token exchange issues at ${ratio.toFixed(2)}× the client_credentials rate`)
}
