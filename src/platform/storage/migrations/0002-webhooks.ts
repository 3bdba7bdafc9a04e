import type { Kysely } from 'kysely'
import { sql } from 'kysely'

/**
 * The webhook area: endpoints, subscriptions, deliveries and their attempts, recovery jobs, idempotency keys
 * and custom event types; fan-out state on the events outbox; the webhook settings of each account.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // Events recorded before webhooks existed had nobody to go to: they count as fanned out.
  await db.schema.alterTable('events').addColumn('fanned_out_at', 'bigint').execute()
  await db.schema.alterTable('events').addColumn('idempotency_key', 'text').execute()
  await sql`update events set fanned_out_at = created_at`.execute(db)
  await db.schema.createIndex('events_unfanned_idx').on('events').column('created_at').where(sql.ref('fanned_out_at'), 'is', null).execute()
  await db.schema.createIndex('events_created_idx').on('events').column('created_at').execute()
  await db.schema.createIndex('events_account_type_idx').on('events').columns(['account_id', 'type', 'id']).execute()

  await db.schema.alterTable('account_settings').addColumn('webhook_retry_schedule', 'text', (c) => c.notNull().defaultTo('[5,300,1800,7200,18000,36000,36000]')).execute()
  await db.schema.alterTable('account_settings').addColumn('webhook_retention_days', 'integer', (c) => c.notNull().defaultTo(30)).execute()
  await db.schema.alterTable('account_settings').addColumn('webhook_disable_after', 'integer', (c) => c.notNull().defaultTo(5 * 24 * 3600)).execute()

  await db.schema
    .createTable('event_idempotency_keys')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('event_idempotency_keys_pk', ['account_id', 'key'])
    .execute()
  await db.schema.createIndex('event_idempotency_keys_expiry_idx').on('event_idempotency_keys').column('expires_at').execute()

  await db.schema
    .createTable('custom_event_types')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('first_published_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('custom_event_types_pk', ['account_id', 'name'])
    .execute()

  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('active', 'disabled')`))
    .addColumn('disabled_reason', 'text')
    .addColumn('disabled_at', 'bigint')
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('rate_limit', 'integer')
    .addColumn('max_in_flight', 'integer', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_expires_at', 'bigint')
    .addColumn('failing_since', 'bigint')
    .addColumn('rate_window_start', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('rate_window_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('webhook_endpoints_account_idx').on('webhook_endpoints').columns(['account_id', 'id']).execute()

  await db.schema
    .createTable('webhook_subscriptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('event_types', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('webhook_subscriptions_account_idx').on('webhook_subscriptions').columns(['account_id', 'id']).execute()
  await db.schema.createIndex('webhook_subscriptions_endpoint_idx').on('webhook_subscriptions').column('endpoint_id').execute()

  // Deliveries outlive their endpoint (cancelled, still listed), so endpoint_id is not a foreign key.
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('endpoint_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'succeeded', 'failed', 'held', 'cancelled')`))
    .addColumn('attempt_count', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('lease_token', 'text')
    .addColumn('leased_at', 'bigint')
    .addColumn('last_attempt_at', 'bigint')
    .addColumn('last_response_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('finished_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute()
  // Listing: newest first within an account, optionally by endpoint, status or type (ids sort by creation time).
  await db.schema.createIndex('webhook_deliveries_account_idx').on('webhook_deliveries').columns(['account_id', 'id']).execute()
  await db.schema.createIndex('webhook_deliveries_endpoint_idx').on('webhook_deliveries').columns(['account_id', 'endpoint_id', 'id']).execute()
  await db.schema.createIndex('webhook_deliveries_status_idx').on('webhook_deliveries').columns(['account_id', 'status', 'id']).execute()
  await db.schema.createIndex('webhook_deliveries_type_idx').on('webhook_deliveries').columns(['account_id', 'event_type', 'id']).execute()
  await db.schema.createIndex('webhook_deliveries_event_idx').on('webhook_deliveries').columns(['event_id', 'endpoint_id']).execute()
  // Claiming: an endpoint's due deliveries in order, and its leased ones (due again when the lease ends).
  await db.schema
    .createIndex('webhook_deliveries_queue_idx')
    .on('webhook_deliveries')
    .columns(['endpoint_id', 'next_attempt_at'])
    .where(sql.ref('status'), '=', 'pending')
    .execute()
  // The next due delivery anywhere, the queue's depth and age (metrics).
  await db.schema
    .createIndex('webhook_deliveries_due_idx')
    .on('webhook_deliveries')
    .column('next_attempt_at')
    .where(sql.ref('status'), '=', 'pending')
    .execute()
  // Retention: finished deliveries by when they finished.
  await db.schema.createIndex('webhook_deliveries_finished_idx').on('webhook_deliveries').column('finished_at').where(sql.ref('finished_at'), 'is not', null).execute()

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('duration_ms', 'integer')
    .addColumn('response_status', 'integer')
    .addColumn('error', 'text')
    .addColumn('response_excerpt', 'text')
    .addPrimaryKeyConstraint('webhook_attempts_pk', ['delivery_id', 'number'])
    .execute()

  await db.schema
    .createTable('webhook_jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('recover')`))
    .addColumn('endpoint_id', 'text', (c) => c.notNull())
    .addColumn('since', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'done')`))
    .addColumn('position', 'text')
    .addColumn('requeued', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .execute()
  await db.schema.createIndex('webhook_jobs_pending_idx').on('webhook_jobs').column('created_at').where(sql.ref('status'), '=', 'pending').execute()
}
