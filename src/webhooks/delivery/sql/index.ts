import type { DialectFeatures } from '../../../platform/storage/database.js'
import type { ClaimSql } from './claim-sql.js'
import { PostgresClaimSql } from './postgres.js'
import { SqliteClaimSql } from './sqlite.js'

/** The claim SQL of the database's dialect: the one place the delivery queue's dialect is decided. */
export function claimSqlFor(features: DialectFeatures): ClaimSql {
  return features.name === 'postgres' ? new PostgresClaimSql() : new SqliteClaimSql(features)
}
