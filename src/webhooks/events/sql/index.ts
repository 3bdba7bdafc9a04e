import type { Kysely } from 'kysely'
import type { SqlDialect } from '../../../platform/storage/dialects/index.js'
import type { DB } from '../../../platform/storage/schema.js'
import type { FanOut } from '../../delivery/fan-out.js'
import { PostgresPublishSql } from './postgres.js'
import type { PublishSql } from './publish-sql.js'
import { SqlitePublishSql } from './sqlite.js'

/** How the database's dialect writes a batch of publishes. */
export function publishSqlFor(dialect: SqlDialect, db: Kysely<DB>, fanOut: FanOut): PublishSql {
  return dialect.name === 'postgres' ? new PostgresPublishSql(dialect, db, fanOut) : new SqlitePublishSql(db, fanOut)
}
