import path from 'node:path'
import type SQLite from 'better-sqlite3'
import { Kysely, PostgresDialect, type SqliteDatabase, type SqliteStatement } from 'kysely'
import pg from 'pg'
import type { DatabaseConfig } from '../config.js'
import { createDataFolder } from './data-folder.js'
import { type SqlDialect, sqlDialect } from './dialects/index.js'
import { WriteLockingSqliteDialect } from './dialects/sqlite-driver.js'
import { withPreparedStatements } from './prepared-statements.js'
import { openSqliteConnection } from './sqlite-open.js'
import type { DB } from './schema.js'

export interface Database {
  db: Kysely<DB>
  /** The SQL that differs between the dialects (see SqlDialect). */
  dialect: SqlDialect
  /** The PostgreSQL connection settings, for the listener's dedicated connection. */
  postgres?: pg.PoolConfig
  close(): Promise<void>
}

const INT8_OID = 20
/** See openPostgres. */
const CONNECT_TIMEOUT_MS = 5000

export function openDatabase(config: DatabaseConfig): Database {
  return config.dialect === 'postgres' ? openPostgres(config.connectionString, config.preparedStatements ?? true) : openSqlite(config.filename)
}

function openSqlite(filename: string): Database {
  if (filename !== ':memory:') createDataFolder(path.dirname(path.resolve(filename)))
  const connection = openSqliteConnection(filename)
  const db = new Kysely<DB>({
    dialect: new WriteLockingSqliteDialect({ database: withStatementCache(connection), migrationLockFile: filename === ':memory:' ? undefined : `${filename}-lock` }),
  })
  return {
    db,
    dialect: sqlDialect('sqlite'),
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

function openPostgres(connectionString: string, preparedStatements: boolean): Database {
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
  pool.on('connect', (client) => {
    client.on('error', () => {})
    // A named statement's generic plan is made once, from the statistics of the moment, and kept for the connection's
    // life: one made while a table was nearly empty walks a whole account's rows once it has grown. A plan made for
    // each run, as unnamed statements get, follows the table; what naming saves is the parse. Queued ahead of any
    // statement of the client's first user; a failure here fails that statement on the same broken connection.
    if (preparedStatements) client.query('set plan_cache_mode = force_custom_plan').catch(() => {})
  })
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: preparedStatements ? withPreparedStatements(pool) : pool }) })
  return {
    db,
    dialect: sqlDialect('postgres'),
    postgres: poolConfig,
    close: () => db.destroy(),
  }
}
