import type { Kysely } from 'kysely'
import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../clock.js'
import type { SqlDialect } from '../storage/dialects/index.js'
import type { DB } from '../storage/schema.js'
import { ThrottledWarning } from '../throttled-warning.js'
import { logReaderFor } from './sql/index.js'
import type { LogReader } from './sql/log-reader.js'

/** Between two reads of the change log: how late a process may learn of a change no notification told it of. */
export const CHANGE_POLL_MS = 1000
/**
 * How long the log keeps a change. A process that could not read the log for longer (a database outage, a paused
 * process) may have missed some, so it forgets everything it cached instead.
 */
export const CHANGE_RETENTION_MS = 10 * 60_000

export interface Change {
  topic: string
  key: string
}

/** What the feed tells of what it read. */
export interface ChangeSink {
  changed(change: Change): void
  /** Some changes may have been missed: nothing cached can be trusted. */
  forgetAll(): void
}

/**
 * Every process's reader of the cache change log (`cache_changes`), which every cache-affecting write appends to in
 * its own transaction. Notifications tell the processes that can hear them at once; the log is what bounds the
 * staleness of everyone else (another process on a SQLite file, a PostgreSQL listener that was reconnecting): each
 * process reads it every CHANGE_POLL_MS, at the cost of one indexed query, however many entries its caches hold.
 */
export class ChangeFeed {
  readonly #reader: LogReader
  readonly #warning = new ThrottledWarning('could not read the cache change log; retrying')
  #timer: NodeJS.Timeout | undefined
  #reading: Promise<number> | undefined
  #stopped = true
  #lastReadAt: number

  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: SqlDialect,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
    private readonly sink: ChangeSink,
  ) {
    this.#reader = logReaderFor(dialect, db)
    this.#lastReadAt = clock.now()
  }

  async start(): Promise<void> {
    await this.#reader.start()
    this.#lastReadAt = this.clock.now()
    this.#stopped = false
    this.#schedule()
  }

  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#timer)
    await this.#reading?.catch(() => {})
  }

  /** Reads the log now (a read under way is shared) and tells the sink; answers how many changes it read. */
  poll(): Promise<number> {
    this.#reading ??= this.#read().finally(() => (this.#reading = undefined))
    return this.#reading
  }

  /** Deletes at most `limit` changes older than the retention; for a Pruner. */
  prune(limit: number): Promise<number> {
    const before = this.clock.now() - CHANGE_RETENTION_MS
    return this.dialect.deleteBatch(this.db, 'cache_changes', { condition: this.#reader.prunable(before), orderBy: 'changed_at', limit })
  }

  async #read(): Promise<number> {
    const startedAt = this.clock.now()
    const changes = await this.#reader.read()
    // Past the retention, changes made while this process could not read may be gone from the log already.
    if (startedAt - this.#lastReadAt > CHANGE_RETENTION_MS / 2) this.sink.forgetAll()
    else for (const change of changes) this.sink.changed(change)
    this.#lastReadAt = startedAt
    return changes.length
  }

  #schedule(): void {
    if (this.#stopped) return
    this.#timer = setTimeout(() => {
      this.poll().then(
        () => this.#schedule(),
        (error: unknown) => {
          this.#warning.report(this.log, error)
          this.#schedule()
        },
      )
    }, CHANGE_POLL_MS)
    this.#timer.unref()
  }
}
