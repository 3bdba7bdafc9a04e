import type { Kysely } from 'kysely'
import type { DB } from '../../../platform/storage/schema.js'
import { transaction } from '../../../platform/storage/transaction.js'
import type { FanOut } from '../../delivery/fan-out.js'
import { claimKeys } from '../idempotency-keys.js'
import { type PublishSql, type PublishWrite, type PublishWritten, typesWritten, writtenEvents } from './publish-sql.js'

/** SQLite has no data-modifying CTEs: a batch is written in one transaction, statement by statement. */
export class SqlitePublishSql implements PublishSql {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly fanOut: FanOut,
  ) {}

  write<T>(batch: PublishWrite, answer: (db: Kysely<DB>, claimed: ReadonlySet<string>) => Promise<T>): Promise<PublishWritten<T>> {
    return transaction(this.db, async (tx) => {
      const claimed = batch.claims.length === 0 ? new Set<string>() : new Set((await claimKeys(tx.db, batch.claims, batch.now).execute()).map((row) => row.event_id))
      const created = writtenEvents(batch.events, claimed)
      if (created.length > 0) {
        await tx.db.insertInto('events').values(created).execute()
        await this.fanOut.deliver(tx, created, batch.now)
        const types = typesWritten(batch.types, created)
        if (types.length > 0) await tx.db.insertInto('custom_event_types').values(types).onConflict((c) => c.doNothing()).execute()
      }
      return { claimed, answered: await answer(tx.db, claimed) }
    })
  }
}
