import type { Kysely } from 'kysely'
import type { SqlDialect } from '../../../platform/storage/dialects/index.js'
import type { DB } from '../../../platform/storage/schema.js'
import { PostgresRotationSql } from './postgres.js'
import type { RotationSql } from './rotation-sql.js'
import { SqliteRotationSql } from './sqlite.js'

/** How the database's dialect writes a refresh token's rotation. */
export function rotationSqlFor(dialect: SqlDialect, db: Kysely<DB>): RotationSql {
  return dialect.name === 'postgres' ? new PostgresRotationSql(db) : new SqliteRotationSql(db)
}
