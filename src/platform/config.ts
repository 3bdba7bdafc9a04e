import path from 'node:path'
import { decodeMasterKey } from './crypto/secret-box.js'
import { type Cidr, parseCidrList } from './outbound/addresses.js'

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

export type DatabaseConfig =
  | { dialect: 'sqlite'; filename: string }
  | {
      dialect: 'postgres'
      connectionString: string
      /** `HERALD_PG_PREPARED_STATEMENTS` (default true): run statements as named prepared statements (see withPreparedStatements). */
      preparedStatements?: boolean
    }

export interface Config {
  port: number
  /** `HERALD_WORKER_PORT`: where `herald worker` answers health checks and serves its metrics; none when unset. */
  workerPort: number | undefined
  host: string
  /** Origin of every issuer, without a trailing slash. */
  publicUrl: string
  /** Whether `PUBLIC_URL` gave it, rather than the default of `PORT` (the CLI then follows the server's: server-record.ts). */
  publicUrlSet: boolean
  database: DatabaseConfig
  /** Raw `HERALD_SECRET_KEY`; undefined lets development on SQLite generate one under the data folder. */
  secretKey: string | undefined
  operatorToken: string | undefined
  logLevel: LogLevel
  production: boolean
  /**
   * The development setup, as `npm start` runs on a fresh clone: SQLite outside production without
   * `HERALD_SECRET_KEY`. It generates its own key and lets webhooks reach receivers on this machine over http.
   */
  development: boolean
  webhookAllowedCidrs: readonly Cidr[]
  /** `HERALD_WEBHOOK_ALLOW_HTTP`: outbound URLs (webhook endpoints, a client's `jwks_uri`) may use plain http. Tests and development only. */
  allowHttpOutbound: boolean
  /** `HERALD_WEBHOOK_TIMEOUT_MS`: the whole of one delivery attempt, connection to response. */
  webhookTimeoutMs: number
  /** `HERALD_WEBHOOK_CONCURRENCY`: attempts one process's delivery worker has in flight at once, over all endpoints. */
  webhookConcurrency: number
  /** `HERALD_CACHE_SIZE`: entries each in-process cache keeps (accounts, clients, settings, key sets, …), least recently used first out. */
  cacheSize: number
  /**
   * `HERALD_TRUSTED_PROXIES`: the peers whose `X-Forwarded-For` names the client's address (per-address limits and
   * the log); anyone else could name any address.
   */
  trustedProxies: readonly Cidr[]
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
    this.name = 'ConfigError'
  }
}

const PORT_RANGE = { default: 8080, minimum: 0, maximum: 65535 }

/** Each attempt in flight holds a connection, and each endpoint's `max_in_flight` caps its own share. */
const WEBHOOK_CONCURRENCY = { default: 512, minimum: 1, maximum: 4096 }

/** Each cache holds one entry per account (per client for clients): the default keeps 10,000 active accounts warm. */
const CACHE_SIZE = { default: 10_000, minimum: 100, maximum: 1_000_000 }

/** Where the development setup may deliver without being told: this machine, as a local receiver listens. */
const DEVELOPMENT_RECEIVERS = '127.0.0.0/8,::1/128'
/** A proxy in front of Herald sits on this machine or on a private network (RFC 1918, RFC 4193), not on the internet. */
const PRIVATE_NETWORKS = '127.0.0.0/8,::1/128,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fc00::/7'

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
export const DEFAULT_SQLITE_FILE = path.join('data', 'herald.db')
/** Long enough that guessing is hopeless; the operator token is compared in constant time. */
const MIN_OPERATOR_TOKEN_LENGTH = 32

type Env = Readonly<Record<string, string | undefined>>

/**
 * Reads the configuration from environment variables. Every bad value is reported at once, one line each,
 * so an operator fixes them in a single pass.
 */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = []
  const production = env.NODE_ENV === 'production'

  const port = parseInteger('PORT', env.PORT, PORT_RANGE, problems)
  const workerPort = nonEmpty(env.HERALD_WORKER_PORT) === undefined ? undefined : parseInteger('HERALD_WORKER_PORT', env.HERALD_WORKER_PORT, PORT_RANGE, problems)
  const host = nonEmpty(env.HOST) ?? '0.0.0.0'
  const publicUrl = parsePublicUrl(env.PUBLIC_URL, port, production, problems)
  const database = parseDatabaseUrl(env.DATABASE_URL, problems)
  if (database.dialect === 'postgres' && nonEmpty(env.HERALD_PG_PREPARED_STATEMENTS) !== undefined) {
    database.preparedStatements = parseBoolean('HERALD_PG_PREPARED_STATEMENTS', env.HERALD_PG_PREPARED_STATEMENTS, problems)
  }

  const secretKey = nonEmpty(env.HERALD_SECRET_KEY)
  if (!secretKey && (database.dialect === 'postgres' || production)) {
    problems.push('HERALD_SECRET_KEY is required with PostgreSQL or NODE_ENV=production (generate one with `openssl rand -base64 32`)')
  }
  for (const part of secretKey?.split(',') ?? []) {
    try {
      decodeMasterKey(part.trim())
    } catch (error) {
      problems.push((error as Error).message)
      break
    }
  }

  const operatorToken = nonEmpty(env.HERALD_OPERATOR_TOKEN)
  if (operatorToken !== undefined && operatorToken.length < MIN_OPERATOR_TOKEN_LENGTH) {
    problems.push(`HERALD_OPERATOR_TOKEN must be at least ${MIN_OPERATOR_TOKEN_LENGTH} characters`)
  }

  const logLevelText = nonEmpty(env.LOG_LEVEL) ?? 'info'
  const logLevel = LOG_LEVELS.find((level) => level === logLevelText)
  if (!logLevel) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevelText}")`)

  const development = database.dialect === 'sqlite' && !production && !secretKey
  let webhookAllowedCidrs: Cidr[] = []
  try {
    webhookAllowedCidrs = parseCidrList(env.HERALD_WEBHOOK_ALLOWED_CIDRS ?? (development ? DEVELOPMENT_RECEIVERS : ''))
  } catch (error) {
    problems.push(`HERALD_WEBHOOK_ALLOWED_CIDRS: ${(error as Error).message}`)
  }

  let trustedProxies: Cidr[] = []
  try {
    trustedProxies = parseCidrList(env.HERALD_TRUSTED_PROXIES ?? PRIVATE_NETWORKS)
  } catch (error) {
    problems.push(`HERALD_TRUSTED_PROXIES: ${(error as Error).message}`)
  }

  const allowHttpOutbound = nonEmpty(env.HERALD_WEBHOOK_ALLOW_HTTP) === undefined ? development : parseBoolean('HERALD_WEBHOOK_ALLOW_HTTP', env.HERALD_WEBHOOK_ALLOW_HTTP, problems)
  const webhookTimeoutMs = parseInteger('HERALD_WEBHOOK_TIMEOUT_MS', env.HERALD_WEBHOOK_TIMEOUT_MS, { default: 15_000, minimum: 1000, maximum: 60_000 }, problems)
  const webhookConcurrency = parseInteger('HERALD_WEBHOOK_CONCURRENCY', env.HERALD_WEBHOOK_CONCURRENCY, WEBHOOK_CONCURRENCY, problems)
  const cacheSize = parseInteger('HERALD_CACHE_SIZE', env.HERALD_CACHE_SIZE, CACHE_SIZE, problems)

  if (problems.length > 0) throw new ConfigError(problems)
  return {
    port,
    workerPort,
    host,
    publicUrl,
    publicUrlSet: nonEmpty(env.PUBLIC_URL) !== undefined,
    database,
    secretKey,
    operatorToken,
    logLevel: logLevel ?? 'info',
    production,
    development,
    webhookAllowedCidrs,
    allowHttpOutbound,
    webhookTimeoutMs,
    webhookConcurrency,
    cacheSize,
    trustedProxies,
  }
}

function parseInteger(name: string, value: string | undefined, bounds: { default: number; minimum: number; maximum: number }, problems: string[]): number {
  const text = nonEmpty(value)
  if (text === undefined) return bounds.default
  const number = Number(text)
  if (!/^\d+$/.test(text) || number < bounds.minimum || number > bounds.maximum) {
    problems.push(`${name} must be an integer from ${bounds.minimum} to ${bounds.maximum} (got "${text}")`)
    return bounds.default
  }
  return number
}

function parseBoolean(name: string, value: string | undefined, problems: string[]): boolean {
  const text = nonEmpty(value)?.toLowerCase()
  if (text === undefined || text === 'false') return false
  if (text === 'true') return true
  problems.push(`${name} must be true or false (got "${value}")`)
  return false
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim()
  return trimmed ? trimmed : undefined
}

function parsePublicUrl(value: string | undefined, port: number, production: boolean, problems: string[]): string {
  const text = nonEmpty(value) ?? `http://localhost:${port}`
  let url: URL
  try {
    url = new URL(text)
  } catch {
    problems.push(`PUBLIC_URL must be an absolute URL such as https://auth.example.com (got "${text}")`)
    return text
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    problems.push(`PUBLIC_URL must use https (or http in development) (got "${text}")`)
  } else if (url.protocol === 'http:' && production) {
    // RFC 8414 §2 and OIDC Discovery require an https issuer.
    problems.push(`PUBLIC_URL must use https when NODE_ENV=production (got "${text}")`)
  }
  if (url.search || url.hash || url.username || url.password) {
    problems.push(`PUBLIC_URL must not contain credentials, a query or a fragment (got "${text}")`)
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
}

function parseDatabaseUrl(value: string | undefined, problems: string[]): DatabaseConfig {
  const text = nonEmpty(value)
  if (text === undefined) return { dialect: 'sqlite', filename: DEFAULT_SQLITE_FILE }
  if (/^postgres(ql)?:\/\//.test(text)) {
    try {
      new URL(text)
    } catch {
      problems.push('DATABASE_URL is not a valid postgres:// URL')
    }
    return { dialect: 'postgres', connectionString: text }
  }
  const sqlite = /^(?:sqlite|file):(.+)$/.exec(text)
  if (sqlite?.[1]) return { dialect: 'sqlite', filename: sqlite[1].replace(/^\/\/(?=\/)/, '') }
  problems.push(`DATABASE_URL must start with postgres://, postgresql://, sqlite: or file: (got a value starting "${text.slice(0, 12)}")`)
  return { dialect: 'sqlite', filename: DEFAULT_SQLITE_FILE }
}
