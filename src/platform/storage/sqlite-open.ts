import SQLite from 'better-sqlite3'

/** How long a statement waits for another process's lock before failing as unavailable. */
export const BUSY_TIMEOUT_MS = 5000
/** How long opening keeps trying while other processes start on the same file. */
const OPEN_PATIENCE_MS = 60_000
const RETRY_PAUSE_MS = 25

/**
 * Opens the file and sets the connection up. Several processes starting at once on a new file each convert it to
 * WAL; two that both hold a read lock and both want the write lock would deadlock, so SQLite answers one of them
 * SQLITE_BUSY at once, without calling the busy handler (https://sqlite.org/c3ref/busy_handler.html). That process
 * tries again: the file is in WAL mode by then, and setting it again changes nothing.
 */
export function openSqliteConnection(filename: string): SQLite.Database {
  const connection = new SQLite(filename)
  try {
    whileBusy(() => configure(connection), Date.now() + OPEN_PATIENCE_MS)
  } catch (error) {
    connection.close()
    throw error
  }
  return connection
}

function configure(connection: SQLite.Database): void {
  // Other processes may write to the same file (a second `serve`, a `worker`, operator CLI commands): a statement
  // outside a transaction, and a transaction's BEGIN IMMEDIATE (see WriteLockingSqliteDialect), wait this long for
  // the lock before failing as unavailable.
  connection.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`)
  // Readers never wait for the writer, nor it for them; only writers take turns.
  connection.pragma('journal_mode = WAL')
  connection.pragma('foreign_keys = ON')
  connection.pragma('synchronous = NORMAL')
}

/** Runs step until it doesn't fail with SQLITE_BUSY, or the deadline passes. Only for start-up: it blocks the thread. */
export function whileBusy<T>(step: () => T, deadline: number, now: () => number = Date.now): T {
  for (;;) {
    try {
      return step()
    } catch (error) {
      if (!isBusy(error) || now() >= deadline) throw error
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, RETRY_PAUSE_MS)
    }
  }
}

function isBusy(error: unknown): boolean {
  return error instanceof SQLite.SqliteError && error.code.startsWith('SQLITE_BUSY')
}
