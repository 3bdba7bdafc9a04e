import { mkdirSync } from 'node:fs'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, PostgresDialect, SqliteDialect, type SqliteDatabase, type SqliteStatement } from 'kysely'
import pg from 'pg'
import type { DatabaseConfig } from '../config.js'
import type { DB } from './schema.js'

/**
 * What differs between the two dialects, in one place, as named flags. Code that needs a dialect-specific
 * path asks these flags rather than comparing dialect names.
 */
export interface DialectFeatures {
  name: 'sqlite' | 'postgres'
  /** LISTEN/NOTIFY carries cache invalidations and wake-ups between processes. */
  notify: boolean
  /**
   * Row locks: `FOR UPDATE SKIP LOCKED` lets several processes claim rows without blocking each other, and a
   * transaction that decides from a row locks it (`FOR SHARE`, `FOR NO KEY UPDATE`), so that a change to the row
   * waits until the decision has committed. SQLite has none: it runs one transaction at a time, so nothing can
   * change in between.
   */
  rowLocks: boolean
  /**
   * Batched transactions of one kind worth running at once (see Batcher). SQLite has one connection. On
   * PostgreSQL two: one batch is written while the other commits; more would only split the same requests into
   * smaller batches, each paying its own round trips (measured with `npm run bench -- deliveries`).
   */
  concurrentTransactions: number
  /** How a JSON array of objects bound as one parameter is read as rows (see jsonRows). */
  jsonRows: 'json_to_recordset' | 'json_each'
  /**
   * Data-modifying statements in WITH: related writes can be one statement, which commits on its own in one round
   * trip instead of a transaction's several (publishing, see publish-statement.ts; leasing a claim's deliveries and
   * recording successful attempts, see DeliveryQueue).
   */
  writableCtes: boolean
  /**
   * `CROSS JOIN LATERAL`: a subquery, with its own LIMIT, run once per row of the table before it. SQLite has none;
   * a plain CROSS JOIN there runs its left table as the outer loop, which serves where a LIMIT per row is not needed.
   */
  lateralJoins: boolean
  /**
   * The column that names a row by its physical place, for picking rows with a subquery and fetching each directly
   * (see deleteBatch): PostgreSQL's `ctid`, SQLite's `rowid`.
   */
  rowAddress: 'ctid' | 'rowid'
}

export interface Database {
  db: Kysely<DB>
  features: DialectFeatures
  /** The PostgreSQL connection settings, for the listener's dedicated connection. */
  postgres?: pg.PoolConfig
  close(): Promise<void>
}

const INT8_OID = 20
/** See openPostgres. */
const CONNECT_TIMEOUT_MS = 5000

export function openDatabase(config: DatabaseConfig): Database {
  return config.dialect === 'postgres' ? openPostgres(config.connectionString) : openSqlite(config.filename)
}

function openSqlite(filename: string): Database {
  if (filename !== ':memory:') mkdirSync(path.dirname(path.resolve(filename)), { recursive: true })
  const connection = new SQLite(filename)
  connection.pragma('journal_mode = WAL')
  // Operator CLI commands may write to the same file while the server runs: wait for the lock, don't fail.
  connection.pragma('busy_timeout = 5000')
  connection.pragma('foreign_keys = ON')
  connection.pragma('synchronous = NORMAL')
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: withStatementCache(connection) }) })
  return {
    db,
    features: { name: 'sqlite', notify: false, rowLocks: false, concurrentTransactions: 1, jsonRows: 'json_each', writableCtes: false, lateralJoins: false, rowAddress: 'rowid' },
    close: () => db.destroy(),
  }
}

/** Distinct SQL texts kept prepared; past this the cache starts over (query texts are few, parameters vary). */
const STATEMENT_CACHE_SIZE = 500

/**
 * Kysely prepares every query afresh, and preparing costs about as much as running a small one. Herald's queries
 * are a few hundred fixed texts with bound parameters, so each is prepared once and reused. Reuse is safe because
 * Kysely runs one query at a time on the connection and Herald never streams results.
 */
function withStatementCache(connection: SQLite.Database): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>()
  return {
    close: () => connection.close(),
    prepare(sql: string): SqliteStatement {
      let statement = statements.get(sql)
      if (statement === undefined) {
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.clear()
        statement = connection.prepare(sql)
        statements.set(sql, statement)
      }
      return statement
    },
  }
}

function openPostgres(connectionString: string): Database {
  const poolConfig: pg.PoolConfig = {
    connectionString,
    max: 10,
    // A server that doesn't answer (a network partition, a failover in progress) fails a request within this, as
    // unavailable, rather than holding it; so does a wait this long for a pooled connection.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // Timestamps are epoch milliseconds in bigint columns: far inside Number's exact range.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  }
  const pool = new pg.Pool(poolConfig)
  // A connection that breaks (the server stopped or restarted, its backend was terminated) makes its client emit
  // 'error', and an EventEmitter's 'error' without a listener ends the process. The pool listens only while a
  // client is idle, and then removes it and re-emits on itself; a client checked out by a query has no listener of
  // the pool's, so every client gets one of its own. Nothing is lost by ignoring the event: the query running on
  // the connection fails with the same error, and a client that is not queryable is dropped on release.
  pool.on('error', () => {})
  pool.on('connect', (client) => client.on('error', () => {}))
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) })
  return {
    db,
    features: { name: 'postgres', notify: true, rowLocks: true, concurrentTransactions: 2, jsonRows: 'json_to_recordset', writableCtes: true, lateralJoins: true, rowAddress: 'ctid' },
    postgres: poolConfig,
    close: () => db.destroy(),
  }
}
