import type { SqlDialect } from '../../../platform/storage/dialects/index.js'
import type { EndpointHealth } from '../endpoint-health.js'
import type { ClaimSql } from './claim-sql.js'
import type { CompletionSql } from './completion-sql.js'
import { PostgresClaimSql, PostgresCompletionSql } from './postgres.js'
import { SqliteClaimSql, SqliteCompletionSql } from './sqlite.js'

/** The claim SQL of the database's dialect: the one place the delivery queue's dialect is decided. */
export function claimSqlFor(dialect: SqlDialect): ClaimSql {
  return dialect.name === 'postgres' ? new PostgresClaimSql() : new SqliteClaimSql(dialect)
}

/** The completion SQL of the database's dialect. */
export function completionSqlFor(dialect: SqlDialect, health: EndpointHealth): CompletionSql {
  return dialect.name === 'postgres' ? new PostgresCompletionSql(dialect, health) : new SqliteCompletionSql()
}
