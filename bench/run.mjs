// `npm run bench -- <target> [options]`: runs one benchmark. Each prints its figures beside what they are
// measured against in the same run (DESIGN.md, "Tests and benchmarks"). Build first: benchmarks import dist/.
import { existsSync } from 'node:fs'

const TARGETS = {
  tokens: { load: () => import('./tokens.mjs'), about: 'token endpoint vs oidc-provider; database queries per token' },
  'token-exchange': { load: () => import('./token-exchange.mjs'), about: 'token exchange (RFC 8693) beside client_credentials on one Herald process; the ratio of their rates' },
  'code-flow': { load: () => import('./code-flow.mjs'), about: 'complete sign-ins (authorize, login, consent, code, token) per second on SQLite and PostgreSQL vs oidc-provider; SQL statements per flow' },
  refresh: { load: () => import('./refresh.mjs'), about: 'refresh-token rotations per second on SQLite and PostgreSQL vs oidc-provider and vs the bare rotation writes; SQL statements per rotation' },
  accounts: { load: () => import('./accounts.mjs'), about: 'tokens and introspection over 10,000 accounts vs one account; RSS; token p99 while accounts are created', limitMinutes: 40 },
  deliveries: { load: () => import('./deliveries.mjs'), about: 'webhook drain, publish rate and publish-to-receive latency on SQLite and PostgreSQL, beside HTTP and write floors' },
  start: { load: () => import('./start.mjs'), about: '`npm start` from a built checkout: launch to /healthz, beside `node dist/main.js serve`' },
  history: { load: () => import('./history.mjs'), about: 'webhook drain on PostgreSQL with 0 and with millions of finished deliveries kept; list p99 beside a bigger account', limitMinutes: 30 },
  'device-polling': { load: () => import('./device-polling.mjs'), about: "1,000 devices polling the token endpoint at their interval (RFC 8628): Herald's CPU as a share of one core, beside idle and floors; SQL statements per poll", limitMinutes: 12 },
}

/** A hard bound on a benchmark run, whatever goes wrong inside it (a target that loads millions of rows sets its own). */
const HARD_LIMIT_MINUTES = 6

function usage() {
  const lines = Object.entries(TARGETS).map(([name, { about }]) => `  ${name.padEnd(10)} ${about}`)
  return `Usage: npm run bench -- <target> [options]\n\nTargets:\n${lines.join('\n')}\n\n--help after a target shows its options.`
}

const [target, ...args] = process.argv.slice(2)
if (target === undefined || target === '--help' || target === '-h') {
  console.log(usage())
  process.exit(target === undefined ? 2 : 0)
}
const entry = Object.hasOwn(TARGETS, target) ? TARGETS[target] : undefined
if (!entry) {
  console.error(`unknown target: ${target}\n\n${usage()}`)
  process.exit(2)
}

const module = await entry.load()
if (args.includes('--help') || args.includes('-h')) {
  console.log(module.USAGE)
  process.exit(0)
}
if (!existsSync(new URL('../dist/main.js', import.meta.url))) {
  console.error('dist/main.js is missing: run `npm run build` first')
  process.exit(1)
}
const limitMinutes = entry.limitMinutes ?? HARD_LIMIT_MINUTES
const limit = setTimeout(() => {
  console.error(`bench ${target}: still running after ${limitMinutes} minutes; giving up`)
  process.exit(1)
}, limitMinutes * 60 * 1000)
limit.unref()
try {
  process.exitCode = await module.main(args)
} catch (error) {
  console.error(`bench ${target} failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
  process.exitCode = 1
}
