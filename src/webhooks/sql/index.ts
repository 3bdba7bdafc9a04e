import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import { postgresRetentionSearch } from './postgres.js'
import type { RetentionSearch } from './retention-search.js'
import { sqliteRetentionSearch } from './sqlite.js'

/** Retention's search of the database's dialect. */
export function retentionSearchFor(dialect: SqlDialect): RetentionSearch {
  return dialect.name === 'postgres' ? postgresRetentionSearch : sqliteRetentionSearch
}
