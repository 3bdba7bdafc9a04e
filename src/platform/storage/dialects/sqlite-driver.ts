import SQLite from 'better-sqlite3'
import { CompiledQuery, type DatabaseConnection, type DialectAdapter, type Driver, SqliteAdapter, SqliteDialect, type SqliteDialectConfig, SqliteDriver } from 'kysely'

export interface WriteLockingSqliteConfig extends SqliteDialectConfig {
  /** The file whose lock one process at a time holds while it migrates; none for a database only one process opens. */
  migrationLockFile?: string
}

/** How long a process starting beside one that migrates waits for it: a migration of a large file takes a while. */
const MIGRATION_WAIT_MS = 5 * 60_000

/**
 * Kysely's SQLite dialect, made safe for several processes on one file. Its transactions begin `IMMEDIATE`: they
 * take the file's write lock at once, waiting out the busy timeout while another process (a second `herald serve`, a
 * `herald worker`, an operator command) holds it. A deferred `BEGIN` takes the lock at its first write instead, and in
 * WAL mode a transaction that read before another process committed can't get it at all: SQLite answers
 * SQLITE_BUSY_SNAPSHOT at once, without waiting. Every transaction Herald opens writes, or reads to decide a write, so
 * none loses by taking the lock first. And migrations run one process at a time (see MigrationLockingSqliteAdapter).
 */
export class WriteLockingSqliteDialect extends SqliteDialect {
  readonly #config: WriteLockingSqliteConfig

  constructor(config: WriteLockingSqliteConfig) {
    super(config)
    this.#config = config
  }

  override createDriver(): Driver {
    return new WriteLockingSqliteDriver(this.#config)
  }

  override createAdapter(): DialectAdapter {
    return new MigrationLockingSqliteAdapter(this.#config.migrationLockFile)
  }
}

class WriteLockingSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'))
  }
}

/**
 * Kysely takes no lock around SQLite's migrations, which it runs outside a transaction (they turn foreign keys off,
 * a no-op inside one): two processes starting on a new file would both apply the baseline, and one fail. Here a
 * process migrates while holding an exclusive lock on a file of its own beside the database; the others wait for it,
 * then find the migrations applied. The operating system releases the lock of a process that dies.
 */
class MigrationLockingSqliteAdapter extends SqliteAdapter {
  #lock: SQLite.Database | undefined

  constructor(private readonly lockFile: string | undefined) {
    super()
  }

  override async acquireMigrationLock(): Promise<void> {
    if (this.lockFile === undefined) return
    const lock = new SQLite(this.lockFile, { timeout: MIGRATION_WAIT_MS })
    try {
      lock.exec('begin exclusive')
    } catch (error) {
      lock.close()
      throw error
    }
    this.#lock = lock
  }

  override async releaseMigrationLock(): Promise<void> {
    // Closing ends the transaction, and with it the lock.
    this.#lock?.close()
    this.#lock = undefined
  }
}
