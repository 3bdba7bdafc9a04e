import type { Kysely, RawBuilder } from 'kysely'

/**
 * Each endpoint's attempts per hour, counted as they are recorded, so that an endpoint's recent history is read
 * from a few dozen rows rather than from its deliveries: how many succeeded, got another answer or none, and the
 * answered ones' total and longest duration. No foreign keys: an attempt recorded just as its endpoint (or account)
 * goes must not fail to be recorded for want of a row to count it in; the rows of a deleted endpoint are deleted with
 * it, and any left behind by such a race go with the hours past keeping.
 */
export async function createEndpointStatsTables(db: Kysely<unknown>, keyText: 'text' | RawBuilder<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoint_hours')
    .addColumn('endpoint_id', keyText, (c) => c.notNull())
    .addColumn('hour', 'bigint', (c) => c.notNull())
    .addColumn('account_id', keyText, (c) => c.notNull())
    .addColumn('succeeded', 'integer', (c) => c.notNull())
    .addColumn('failed', 'integer', (c) => c.notNull())
    .addColumn('errored', 'integer', (c) => c.notNull())
    .addColumn('duration_ms_sum', 'bigint', (c) => c.notNull())
    .addColumn('duration_ms_max', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_endpoint_hours_pk', ['endpoint_id', 'hour'])
    .execute()
  // Pruning, oldest hours first, across accounts.
  await db.schema.createIndex('webhook_endpoint_hours_hour_idx').on('webhook_endpoint_hours').column('hour').execute()
}
