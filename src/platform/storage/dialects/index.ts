import { postgresDialect } from './postgres.js'
import type { DialectName, SqlDialect } from './sql-dialect.js'
import { sqliteDialect } from './sqlite.js'

export type { DialectName, RowLockOptions, SqlDialect } from './sql-dialect.js'

/** The SQL dialect of a database: the one place it is chosen (see openDatabase). */
export function sqlDialect(name: DialectName): SqlDialect {
  return name === 'postgres' ? postgresDialect : sqliteDialect
}
