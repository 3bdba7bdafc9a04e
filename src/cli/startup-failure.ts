import type { DatabaseConfig } from '../platform/config.js'

/** What a start-up failure is read against: the database configured (none for `herald listen`), and what chose the port. */
export interface StartupContext {
  database?: DatabaseConfig
  portVariable: 'PORT' | 'HERALD_WORKER_PORT' | '--port'
}

/** A Node system error or a database error: the fields these failures carry. */
interface CodedError {
  code: string
  message: string
  syscall?: string
  path?: string
  address?: string
  port?: number
}

/**
 * One line naming what kept Herald from starting and how to fix it, for the failures an operator causes (the database
 * missing or unreachable, the port taken, the data folder impossible); undefined for any other error, a bug, whose
 * stack is its report.
 */
export function describeStartupFailure(error: unknown, context: StartupContext): string | undefined {
  const cause = codedCause(error)
  if (!cause) return undefined
  if (cause.syscall === 'listen') return describeListen(cause, context.portVariable)
  const { database } = context
  if (database === undefined) return undefined
  if (database.dialect === 'postgres') return describePostgres(cause, postgresTarget(database.connectionString))
  if (cause.syscall === 'mkdir' && cause.path) {
    return `can't create the data folder ${cause.path} (${systemReason(cause)}): choose one Herald may create, with DATABASE_URL=sqlite:/path/to/herald.db`
  }
  if (cause.code === 'SQLITE_CANTOPEN') {
    return `can't open the SQLite database ${database.filename}: DATABASE_URL must name a file, in a folder Herald may write`
  }
  return undefined
}

function describeListen(cause: CodedError, portVariable: StartupContext['portVariable']): string | undefined {
  const where = `port ${cause.port ?? '?'} on ${cause.address ?? 'every address'}`
  if (cause.code === 'EADDRINUSE') return `${where} is already in use (another Herald?): stop what listens there, or set ${portVariable} to a free port`
  if (cause.code === 'EACCES') return `not allowed to listen on ${where}: ports below 1024 need privileges; set ${portVariable} to 1024 or above`
  if (cause.code === 'EADDRNOTAVAIL') return `can't listen on ${cause.address ?? 'HOST'}: it is not an address of this machine; set HOST to one that is, or to 0.0.0.0`
  return undefined
}

interface PostgresTarget {
  host: string
  port: string
  user: string | undefined
  database: string | undefined
}

/** Why a connection got no server, by Node's error code. */
const UNREACHABLE: ReadonlyMap<string, string> = new Map([
  ['ECONNREFUSED', 'connection refused'],
  ['ENOTFOUND', 'no such host'],
  ['EAI_AGAIN', 'the host name did not resolve'],
  ['ETIMEDOUT', 'no answer'],
  ['EHOSTUNREACH', 'host unreachable'],
  ['ENETUNREACH', 'network unreachable'],
])

function describePostgres(cause: CodedError, target: PostgresTarget): string | undefined {
  const server = `PostgreSQL at ${target.host}:${target.port}`
  const reason = UNREACHABLE.get(cause.code)
  if (reason) return `can't reach ${server} (${reason}): start the server, or correct the host and port in DATABASE_URL`
  // SQLSTATE 3D000 invalid_catalog_name: the server answers, the database isn't there.
  if (cause.code === '3D000') {
    const name = target.database ?? /"([^"]+)"/.exec(cause.message)?.[1] ?? 'NAME'
    const createdb = ['createdb', '-h', target.host, '-p', target.port, ...(target.user ? ['-U', target.user] : []), name].join(' ')
    return `PostgreSQL database "${name}" does not exist at ${target.host}:${target.port}: create it with \`${createdb}\` (or CREATE DATABASE "${name}";), or correct DATABASE_URL`
  }
  // 28P01 invalid_password, 28000 invalid_authorization_specification (no pg_hba.conf entry, no such role).
  if (cause.code === '28P01' || cause.code === '28000') return `${server} refused the connection: ${cause.message}; correct the user and password in DATABASE_URL`
  return undefined
}

/** The server a `postgres://` URL names, with node-postgres's defaults (`?host=` may name a socket folder). */
function postgresTarget(connectionString: string): PostgresTarget {
  const url = new URL(connectionString)
  const database = decodeURIComponent(url.pathname.slice(1))
  return {
    host: url.searchParams.get('host') ?? (url.hostname || 'localhost'),
    port: url.searchParams.get('port') ?? (url.port || '5432'),
    user: url.username ? decodeURIComponent(url.username) : undefined,
    database: database || undefined,
  }
}

/** The system's words for the error ("not a directory"), as Node puts them before the syscall in its message. */
function systemReason(cause: CodedError): string {
  return new RegExp(`^${cause.code}: ([^,]+),`).exec(cause.message)?.[1] ?? cause.code
}

/**
 * The error that carries a code: the error itself, or what it wraps. Node reports a failed connection to a name with
 * several addresses (localhost: ::1, then 127.0.0.1) as an AggregateError of each address's error.
 */
function codedCause(error: unknown, depth = 0): CodedError | undefined {
  if (!(error instanceof Error) || depth > 4) return undefined
  if (isCoded(error)) return error
  if (error instanceof AggregateError) return codedCause(error.errors[0], depth + 1)
  return codedCause(error.cause, depth + 1)
}

function isCoded(error: Error): error is Error & CodedError {
  return 'code' in error && typeof error.code === 'string'
}
