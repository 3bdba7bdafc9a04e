import { type Kysely, type RawBuilder, sql } from 'kysely'
import type { DB } from '../../storage/schema.js'
import type { Change } from '../change-feed.js'
import type { LogReader } from './log-reader.js'

/** SQLite has one writer at a time, so changes commit in sequence order: everything after the last one read. */
export class SequenceReader implements LogReader {
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
