/**
 * Whether an error means the database can't serve right now (unreachable, restarting, its connection cut, locked,
 * full, or aborting the transaction for a concurrent one's sake) rather than that the request or Herald is wrong.
 * Such errors pass with time, so requests answer 503 with `Retry-After` and background work backs off; every other
 * error is a bug. The one place that decides it.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let cause = error, depth = 0; isObject(cause) && depth < 5; cause = cause.cause, depth++) {
    if (typeof cause.code === 'string' && isUnavailableCode(cause.code)) return true
    if (typeof cause.message === 'string' && UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(cause.message as string))) return true
    // Node's connect tries every address of a name (localhost: ::1, then 127.0.0.1) and reports all failures at once.
    if (cause instanceof AggregateError && cause.errors.some(isDatabaseUnavailable)) return true
  }
  return false
}

/** Socket errors on the way to the server or on an open connection, as Node names them. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])

/**
 * PostgreSQL SQLSTATEs (Appendix A): class 08 connection exceptions; 57P01 admin_shutdown, 57P02 crash_shutdown,
 * 57P03 cannot_connect_now (starting up or shutting down); 53300 too_many_connections; 25006
 * read_only_sql_transaction, what a former primary answers after a failover demoted it; 40001
 * serialization_failure and 40P01 deadlock_detected, a transaction aborted for another's sake, which the same request
 * made again completes (§13.4: "applications using this level must be prepared to retry transactions").
 */
const POSTGRES_CODES = new Set(['57P01', '57P02', '57P03', '53300', '25006', '40001', '40P01'])

/** PostgreSQL's class 08, connection exceptions. */
const POSTGRES_CONNECTION_CLASS = /^08[0-9A-Z]{3}$/

/**
 * better-sqlite3's codes: the file stayed locked past the busy timeout (another process writes), or the disk (or
 * `max_page_count`) is full; extended codes (SQLITE_BUSY_SNAPSHOT, …) refine them. The transaction is rolled back,
 * so nothing is left half-written.
 */
const SQLITE_CODES = /^SQLITE_(BUSY|LOCKED|FULL)(_|$)/

function isUnavailableCode(code: string): boolean {
  return NETWORK_CODES.has(code) || POSTGRES_CODES.has(code) || POSTGRES_CONNECTION_CLASS.test(code) || SQLITE_CODES.test(code)
}

/**
 * node-postgres raises these as plain Errors without a code: the server closed the connection, a pooled client
 * was already broken, or no connection came within `connectionTimeoutMillis` (the pool's and the client's wording).
 */
const UNAVAILABLE_MESSAGES = [/^Connection terminated/, /is not queryable$/, /^timeout exceeded when trying to connect$/, /^timeout expired$/]

function isObject(value: unknown): value is { code?: unknown; message?: unknown; cause?: unknown } {
  return typeof value === 'object' && value !== null
}
