import { type Kysely, type RawBuilder, sql } from 'kysely'
import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../clock.js'
import type { DialectFeatures } from '../storage/database.js'
import { deleteBatch } from '../storage/delete-batch.js'
import type { DB } from '../storage/schema.js'
import { ThrottledWarning } from '../throttled-warning.js'

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

/** Reads the changes committed since its last read; each dialect knows what "since" means. */
interface LogReader {
  /** Takes the log's current end as the starting point: a process that just started has nothing cached. */
  start(): Promise<void>
  read(): Promise<Change[]>
  /** Which changes older than `before` every reader has surely read, so that pruning them loses none. */
  prunable(before: number): RawBuilder<boolean>
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
    private readonly features: DialectFeatures,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
    private readonly sink: ChangeSink,
  ) {
    this.#reader = features.name === 'postgres' ? new SnapshotReader(db) : new SequenceReader(db)
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
    return deleteBatch(this.db, this.features, 'cache_changes', { condition: this.#reader.prunable(before), orderBy: 'changed_at', limit })
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

/** SQLite has one writer at a time, so changes commit in sequence order: everything after the last one read. */
class SequenceReader implements LogReader {
  #after = 0

  constructor(private readonly db: Kysely<DB>) {}

  async start(): Promise<void> {
    const { last } = await this.db.selectFrom('cache_changes').select((eb) => eb.fn.max('seq').as('last')).executeTakeFirstOrThrow()
    this.#after = last ?? 0
  }

  prunable(before: number): RawBuilder<boolean> {
    return sql<boolean>`changed_at < ${before}`
  }

  async read(): Promise<Change[]> {
    const rows = await this.db.selectFrom('cache_changes').select(['seq', 'topic', 'key']).where('seq', '>', this.#after).orderBy('seq').execute()
    this.#after = rows.at(-1)?.seq ?? this.#after
    return rows
  }
}

/**
 * PostgreSQL hands out sequence numbers as transactions insert, not as they commit, so a change numbered before
 * one already read may commit after it. Every transaction older than a snapshot's xmin has ended, so a read that
 * takes every change whose transaction id is at least the previous read's xmin misses nothing; changes it saw
 * already are recognised by number and not told twice.
 */
class SnapshotReader implements LogReader {
  #fromXid = '0'
  /** The changes read whose transaction the next read will look at again. */
  #seen = new Set<number>()

  constructor(private readonly db: Kysely<DB>) {}

  async start(): Promise<void> {
    const { rows } = await sql<{ xmin: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`.execute(this.db)
    this.#fromXid = rows[0]?.xmin ?? '0'
    // The xmin is the whole cluster's: a transaction open anywhere holds it back, behind changes committed already.
    // Those precede this process's caches; read now, they are marked seen and never told.
    await this.read()
  }

  /**
   * Besides its age (by the writer's clock), a change's transaction must be older than every one still running: a
   * transaction open for longer than the retention commits changes that are already "old".
   */
  prunable(before: number): RawBuilder<boolean> {
    return sql<boolean>`changed_at < ${before} and txid < pg_snapshot_xmin(pg_current_snapshot())`
  }

  async read(): Promise<Change[]> {
    const { rows } = await sql<{ xmin: string; seq: number | null; topic: string | null; key: string | null; txid: string | null }>`
      select s.xmin::text as xmin, c.seq, c.topic, c.key, c.txid::text as txid
      from (select pg_snapshot_xmin(pg_current_snapshot()) as xmin) s
      left join cache_changes c on c.txid >= ${this.#fromXid}::xid8
      order by c.seq`.execute(this.db)
    const xmin = BigInt(rows[0]?.xmin ?? this.#fromXid)
    const fresh: Change[] = []
    const seen = new Set<number>()
    for (const { seq, topic, key, txid } of rows) {
      if (seq === null || topic === null || key === null || txid === null) continue
      if (!this.#seen.has(seq)) fresh.push({ topic, key })
      if (BigInt(txid) >= xmin) seen.add(seq)
    }
    this.#fromXid = xmin.toString()
    this.#seen = seen
    return fresh
  }
}
