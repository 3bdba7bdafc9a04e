import type { Kysely } from 'kysely'
import type { Notifications } from '../../notifications/notifications.js'
import type { SqlDialect } from '../../storage/dialects/index.js'
import type { DB } from '../../storage/schema.js'
import type { Outbox } from '../outbox.js'
import type { GuardedEventsSql } from './guarded-events.js'
import { PostgresGuardedEvents } from './postgres.js'
import { SqliteGuardedEvents } from './sqlite.js'

/** How the database's dialect writes a guarded change with its event. */
export function guardedEventsFor(dialect: SqlDialect, db: Kysely<DB>, outbox: Outbox, notifications: Notifications): GuardedEventsSql {
  return dialect.name === 'postgres' ? new PostgresGuardedEvents(db, dialect, notifications) : new SqliteGuardedEvents(db, outbox)
}
