import type { FastifyBaseLogger } from 'fastify'
import type { Database } from '../../storage/database.js'
import { PostgresNotificationTransport } from './postgres.js'
import { sqliteNotificationTransport } from './sqlite.js'
import type { NotificationTransport } from './transport.js'

/** The notification transport of the database's dialect. */
export function notificationTransportFor(database: Database, log: FastifyBaseLogger): NotificationTransport {
  return database.dialect.name === 'postgres' ? new PostgresNotificationTransport(database.postgres, log) : sqliteNotificationTransport
}
