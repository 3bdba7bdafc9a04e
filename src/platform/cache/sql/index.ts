import type { Kysely } from 'kysely'
import type { SqlDialect } from '../../storage/dialects/index.js'
import type { DB } from '../../storage/schema.js'
import type { LogReader } from './log-reader.js'
import { SnapshotReader } from './postgres.js'
import { SequenceReader } from './sqlite.js'

/** The change log's reader of the database's dialect. */
export function logReaderFor(dialect: SqlDialect, db: Kysely<DB>): LogReader {
  return dialect.name === 'postgres' ? new SnapshotReader(db) : new SequenceReader(db)
}
