import path from 'node:path'
import type { CompiledQuery, Kysely } from 'kysely'
import type { DB } from '../../src/platform/storage/schema.js'
import { unscopedTables } from './account-scoping.js'
import { watchStatements } from './statements.js'

/**
 * The modules (`path`) and methods (`path#method`) that work across accounts by design, and may touch a tenant table
 * without naming an account: the delivery worker (its claim finds the due deliveries of every account, and what
 * follows works on those rows by id), retention and pruning, the workers' picks of sweeps and jobs, batches that
 * serve several accounts' requests in one statement, and the metrics. Each says so in its comment. Paths are
 * relative to `src/`.
 */
export const CROSS_ACCOUNT_MODULES: readonly string[] = [
  'webhooks/delivery/delivery-queue.ts',
  'webhooks/delivery/sql/postgres.ts',
  'webhooks/delivery/sql/sqlite.ts',
  'webhooks/delivery/completions.ts',
  'webhooks/delivery/endpoint-health.ts',
  'webhooks/delivery/fan-out.ts#drain',
  'authorization/revocation/revocation-store.ts#lookUp',
  'webhooks/events/sql/postgres.ts',
  'webhooks/worker-picks.ts',
  'webhooks/retention.ts',
  'webhooks/metrics.ts',
  'authorization/revocation/revocation-store.ts#pruneExpired',
  'authorization/token/assertion-replay.ts#pruneExpired',
  'authorization/sign-in/janitor.ts',
  'authorization/console-links/console-links.ts#pruneExpired',
  'webhooks/endpoints/endpoint-stats.ts#pruneOld',
  'authorization/registration/initial-access-tokens.ts#pruneExpired',
  'authorization/registration/registration-store.ts#unused',
]

/** Tables whose rows each belong to one account, as the migrated schema has them: the ones with `account_id`. */
export const TENANT_TABLES: ReadonlySet<string> = new Set([
  'authorization_flows',
  'browser_sessions',
  'consents',
  'refresh_tokens',
  'logout_requests',
  'session_clients',
  'console_links',
  'webhook_endpoint_hours',
  'account_settings',
  'signing_keys',
  'clients',
  'client_scopes',
  'scopes',
  'events',
  'token_revocations',
  'client_assertion_jtis',
  'event_idempotency_keys',
  'custom_event_types',
  'webhook_endpoints',
  'webhook_subscriptions',
  'webhook_deliveries',
  'webhook_sweeps',
  'webhook_attempts',
  'webhook_jobs',
  'device_authorizations',
  'device_challenges',
  'registration_tokens',
  'client_registrations',
])

export interface TenancyViolation {
  sql: string
  /** The Herald module that sent the statement, relative to `src/`, with its line. */
  module: string
  /** The tenant tables (by the statement's names for them) that it left without an account. */
  tables: string[]
}

export interface TenancyAudit {
  /** Statements that left a tenant table they name without an account, outside CROSS_ACCOUNT_MODULES. */
  readonly violations: TenancyViolation[]
  /** How many statements Herald's own modules sent while the audit ran: proof that it saw them. */
  readonly checked: number
  stop(): void
}

const SOURCE_ROOT = path.resolve(import.meta.dirname, '../../src') + path.sep
/** The modules that watch statements: their own frames sit on every statement's stack. */
const WATCHING_MODULES = new Set([import.meta.filename, path.resolve(import.meta.dirname, 'statements.ts')])
const TEST_ROOT = path.resolve(import.meta.dirname, '..') + path.sep
/** Storage helpers build statements for their callers: the caller is the module that decides what they touch. */
const STORAGE_HELPERS = `${SOURCE_ROOT}platform${path.sep}storage${path.sep}`

/**
 * Watches every statement `db` sends (its transactions' included) and records those of Herald's modules that name a
 * tenant table without scoping it by its own `account_id` (see unscopedTables). The module is read
 * from the stack when the statement is sent: Kysely compiles and sends a query synchronously inside `execute()`, so
 * its caller is on the stack. Statements that tests send themselves are not Herald's and are not checked.
 */
export function auditTenancy(db: Kysely<DB>, crossAccount: readonly string[] = CROSS_ACCOUNT_MODULES): TenancyAudit {
  const audit = { violations: [] as TenancyViolation[], checked: 0 }
  const allowed = new Set(crossAccount)
  const inspect = (query: CompiledQuery): void => {
    const frames = heraldFrames(callStack())
    const sender = frames[0]
    if (sender === undefined) return
    audit.checked++
    const tables = unscopedTables(query.sql, TENANT_TABLES)
    if (tables.length === 0) return
    if (allowed.has(sender.file) || frames.some((frame) => allowed.has(`${frame.file}#${frame.method}`))) return
    audit.violations.push({ sql: query.sql, module: `${sender.file}:${sender.line}`, tables })
  }
  const restore = watchStatements(db, inspect)
  return {
    get violations() {
      return audit.violations
    },
    get checked() {
      return audit.checked
    },
    stop: restore,
  }
}

/** The whole stack: Kysely's and the driver's frames come before Herald's, more than the default ten. */
function callStack(): string {
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 100
  const stack = new Error().stack ?? ''
  Error.stackTraceLimit = limit
  return stack
}

interface Frame {
  /** Relative to `src/`. */
  file: string
  line: string
  /** The function's own name, without its class or a private method's `#`; empty for an anonymous function. */
  method: string
}

/**
 * The frames of Herald's source outside the storage helpers, the sender first; none when a test sent the statement
 * (a test frame before any of Herald's).
 */
function heraldFrames(stack: string): Frame[] {
  const frames: Frame[] = []
  for (const frame of stack.split('\n').slice(1)) {
    const location = /^at (?:async )?(?:(.+?) \()?((?:file:\/\/)?\/[^():]+):(\d+):\d+\)?$/.exec(frame.trim())
    if (!location) continue
    const file = location[2]!.replace(/^file:\/\//, '')
    if (WATCHING_MODULES.has(file)) continue
    if (file.startsWith(TEST_ROOT)) break
    if (!file.startsWith(SOURCE_ROOT) || file.startsWith(STORAGE_HELPERS)) continue
    frames.push({ file: file.slice(SOURCE_ROOT.length).split(path.sep).join('/'), line: location[3]!, method: location[1]?.split(/[. ]/).at(-1)?.replace(/^#/, '') ?? '' })
  }
  return frames
}
