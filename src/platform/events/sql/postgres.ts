import { type Kysely, sql } from 'kysely'
import { newId } from '../../ids.js'
import type { Notifications } from '../../notifications/notifications.js'
import type { SqlDialect } from '../../storage/dialects/index.js'
import type { JsonColumnType } from '../../storage/json-rows.js'
import type { DB, EventsTable } from '../../storage/schema.js'
import type { Guard, GuardedEvent, GuardedEventsSql } from './guarded-events.js'

const EVENT_COLUMNS: { readonly [Column in keyof EventsTable]-?: JsonColumnType } = {
  id: 'text',
  account_id: 'text',
  type: 'text',
  data: 'text',
  created_at: 'bigint',
  idempotency_key: 'text',
  fanned_out_at: 'bigint',
}

/**
 * PostgreSQL: one statement, which commits by itself, where a transaction would take four round trips (begin, the
 * guard, the event, commit). The event is inserted only if the guard (a CTE) returned its row, and the webhook
 * workers' wake-up rides on the insert's RETURNING.
 */
export class PostgresGuardedEvents implements GuardedEventsSql {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: SqlDialect,
    private readonly notifications: Notifications,
  ) {}

  async recordIf<T extends keyof DB>(guard: Guard<T>, { accountId, type, data }: GuardedEvent, now: number): Promise<boolean> {
    const event: EventsTable = { id: newId('evt', now), account_id: accountId, type, data: JSON.stringify(data), created_at: now, idempotency_key: null, fanned_out_at: null }
    const signal = this.notifications.inStatement('herald_webhooks', 'events')
    const columns = sql.join(Object.keys(EVENT_COLUMNS).map((column) => sql.ref(column)))
    const { rows } = await sql<{ signalled: unknown }>`
      with guard as (${guard(this.db).returning(sql<number>`1`.as('changed'))})
      insert into events (${columns})
      select ${columns} from ${this.dialect.jsonRows(EVENT_COLUMNS, [event])} as e
      where exists (select 1 from guard)
      returning ${signal.expression} as signalled`.execute(this.db)
    if (rows.length === 0) return false
    signal.sent()
    return true
  }
}
