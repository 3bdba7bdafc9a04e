import { type Kysely, type RawBuilder, sql } from 'kysely'
import type { SqlDialect } from '../../../platform/storage/dialects/index.js'
import type { JsonColumnType } from '../../../platform/storage/json-rows.js'
import type { CustomEventTypesTable, DB, EventIdempotencyKeysTable, EventsTable } from '../../../platform/storage/schema.js'
import type { FanOut } from '../../delivery/fan-out.js'
import { insertDeliveries, type NewDelivery } from '../../delivery/new-deliveries.js'
import { claimKeys } from '../idempotency-keys.js'
import type { PublishSql, PublishWrite, PublishWritten } from './publish-sql.js'

/**
 * PostgreSQL writes a batch of publishes in one statement (see writePublishStatement). Cross-account: a batch holds
 * several accounts' publishes, and every row written carries its own account.
 */
export class PostgresPublishSql implements PublishSql {
  constructor(
    private readonly dialect: SqlDialect,
    private readonly db: Kysely<DB>,
    private readonly fanOut: FanOut,
  ) {}

  async write<T>(batch: PublishWrite, answer: (db: Kysely<DB>, claimed: ReadonlySet<string>) => Promise<T>): Promise<PublishWritten<T>> {
    const deliveries = await this.fanOut.planForStatement(batch.events, batch.now)
    const { claimed, woke } = await writePublishStatement(this.db, this.dialect, {
      now: batch.now,
      claims: batch.claims,
      events: batch.events,
      deliveries: deliveries.rows,
      types: batch.types,
      wake: deliveries.wake?.expression,
    })
    if (woke) deliveries.wake?.sent()
    return { claimed, answered: await answer(this.db, claimed) }
  }
}

/** Every column of a table, with its type: written from the rows as they are, with none left to a default. */
type ColumnTypes<Row> = { readonly [Column in keyof Row & string]-?: JsonColumnType }

const EVENT_COLUMNS: ColumnTypes<EventsTable> = {
  id: 'text',
  account_id: 'text',
  type: 'text',
  data: 'text',
  created_at: 'bigint',
  fanned_out_at: 'bigint',
  idempotency_key: 'text',
}

const TYPE_COLUMNS: ColumnTypes<CustomEventTypesTable> = { account_id: 'text', name: 'text', first_published_at: 'bigint' }

/** A batch of publishes, everything it may write worked out beforehand. */
interface PublishStatement {
  now: number
  /** Each key once, in key order (see claimKeys). */
  claims: readonly EventIdempotencyKeysTable[]
  /** Written if they have no key, or if their key's claim is won. */
  events: readonly EventsTable[]
  /** Written if their event is (see insertDeliveries). */
  deliveries: readonly NewDelivery[]
  /** Recorded (unless they already are) if an event of theirs is written. */
  types: readonly CustomEventTypesTable[]
  /** Evaluated if a pending delivery is written: the wake-up of the delivery workers. */
  wake: RawBuilder<void> | undefined
}

interface PublishStatementResult {
  /** The events whose key's claim was won. */
  claimed: ReadonlySet<string>
  /** Whether `wake` was evaluated. */
  woke: boolean
}

/**
 * Writes a batch of publishes with one PostgreSQL statement of data-modifying CTEs. A statement commits on its
 * own, so the batch costs one round trip instead of a transaction's four to six, and is as atomic as one. All
 * parts of the statement see the snapshot it started with, so each learns what an earlier part wrote only from
 * that part's RETURNING: the events written are those whose claim came back, their deliveries and types follow
 * them. Rows go in as one JSON parameter per table (see jsonRows).
 */
async function writePublishStatement(db: Kysely<DB>, dialect: SqlDialect, batch: PublishStatement): Promise<PublishStatementResult> {
  const keyed = batch.claims.length > 0
  const rows = <Row extends Record<keyof Row & string, string | number | null>>(alias: string, types: ColumnTypes<Row>, values: readonly Row[]) =>
    sql`${dialect.jsonRows(types, values)} as ${sql.table(alias)}`
  const { rows: [result] } = await sql<{ claimed: string[] | null; woke: number | null }>`
    with ${keyed ? sql`claimed as (${claimKeys(db, batch.claims, batch.now)}),` : sql``}
    inserted_events as (
      insert into events (${columnList(EVENT_COLUMNS)})
      select ${columnList(EVENT_COLUMNS, 'e')} from ${rows('e', EVENT_COLUMNS, batch.events)}
      ${keyed ? sql`where e.idempotency_key is null or e.id in (select event_id from claimed)` : sql``}
      returning id, account_id, type
    ),
    inserted_deliveries as (${insertDeliveries(dialect, batch.deliveries, sql`d.event_id in (select id from inserted_events)`)}),
    recorded_types as (
      insert into custom_event_types (${columnList(TYPE_COLUMNS)})
      select ${columnList(TYPE_COLUMNS, 't')} from ${rows('t', TYPE_COLUMNS, batch.types)}
      where (t.account_id, t.name) in (select account_id, type from inserted_events)
      on conflict do nothing
    )
    select
      ${keyed ? sql`array(select event_id from claimed)` : sql`null`} as claimed,
      ${batch.wake ? sql`(select count(${batch.wake}) from (select from inserted_deliveries where status = 'pending' limit 1) as pending)` : sql`null`} as woke
  `.execute(db)
  return { claimed: new Set(result?.claimed ?? []), woke: (result?.woke ?? 0) > 0 }
}

/** The columns of `types`, for an insert's column list, or qualified by `alias` for its select list. */
function columnList<Row>(types: ColumnTypes<Row>, alias?: string): RawBuilder<unknown> {
  return sql.join(Object.keys(types).map((column) => sql.ref(alias === undefined ? column : `${alias}.${column}`)))
}
