import { type Kysely, type RawBuilder, sql } from 'kysely'
import type { DB } from '../../storage/schema.js'
import type { Change } from '../change-feed.js'
import type { LogReader } from './log-reader.js'

/**
 * PostgreSQL hands out sequence numbers as transactions insert, not as they commit, so a change numbered before
 * one already read may commit after it. Every transaction older than a snapshot's xmin has ended, so a read that
 * takes every change whose transaction id is at least the previous read's xmin misses nothing; changes it saw
 * already are recognised by number and not told twice.
 */
export class SnapshotReader implements LogReader {
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
