import { type Expression, type Kysely, type RawBuilder, sql } from 'kysely'

/** How the two dialects' baselines differ in the tables they share (see postgres.ts and sqlite.ts). */
export interface BaselineDialect {
  /** The type of every text column that a key or an index compares: ids, names, statuses. */
  keyText: 'text' | RawBuilder<unknown>
  /** Ends the statement that creates `webhook_deliveries`: its storage parameters, if any. */
  deliveriesStorage?: Expression<unknown>
  /** Whether `webhook_attempts.account_id` is a foreign key to `accounts`. */
  attemptsReferenceAccounts: boolean
}

/**
 * The tables both dialects share, with their keys and indexes. Columns keep the order that development databases,
 * migrated before the baseline, have: both kinds of database then look the same (test/platform/migrations.test.ts).
 */
export async function createTables(db: Kysely<unknown>, dialect: BaselineDialect): Promise<void> {
  await createPlatformTables(db, dialect)
  await createWebhookTables(db, dialect)
}

/** Accounts, settings, keys, clients, scopes, the events outbox, token revocations and used client assertion ids. */
async function createPlatformTables(db: Kysely<unknown>, { keyText }: BaselineDialect): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', keyText, (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('active', 'disabled')`))
    .addColumn('admin_client_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('account_settings')
    .addColumn('account_id', keyText, (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
    .addColumn('access_token_ttl', 'integer', (c) => c.notNull())
    .addColumn('refresh_token_idle_ttl', 'integer', (c) => c.notNull())
    .addColumn('refresh_token_absolute_ttl', 'integer', (c) => c.notNull())
    .addColumn('id_token_ttl', 'integer', (c) => c.notNull())
    .addColumn('authorization_code_ttl', 'integer', (c) => c.notNull())
    .addColumn('default_audience', 'text')
    .addColumn('access_token_signing_alg', 'text', (c) => c.notNull().check(sql`access_token_signing_alg in ('ES256', 'RS256')`))
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('webhook_retry_schedule', 'text', (c) => c.notNull().defaultTo('[5,300,1800,7200,18000,36000,36000]'))
    .addColumn('webhook_retention_days', 'integer', (c) => c.notNull().defaultTo(30))
    .addColumn('webhook_disable_after', 'integer', (c) => c.notNull().defaultTo(5 * 24 * 3600))
    .execute()

  await db.schema
    .createTable('signing_keys')
    .addColumn('id', keyText, (c) => c.primaryKey())
    .addColumn('account_id', keyText, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('alg', keyText, (c) => c.notNull().check(sql`alg in ('ES256', 'RS256')`))
    .addColumn('public_jwk', 'text', (c) => c.notNull())
    .addColumn('private_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('signs_from', 'bigint', (c) => c.notNull())
    .addColumn('retires_at', 'bigint')
    .addColumn('published_until', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .execute()
  await db.schema.createIndex('signing_keys_account_idx').on('signing_keys').columns(['account_id', 'alg', 'signs_from']).execute()

  await db.schema
    .createTable('clients')
    .addColumn('id', keyText, (c) => c.primaryKey())
    .addColumn('account_id', keyText, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('management', 'standard')`))
    .addColumn('secret_hash', 'text')
    .addColumn('token_endpoint_auth_method', 'text', (c) => c.notNull())
    .addColumn('grant_types', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('credentials_changed_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('clients_account_idx').on('clients').columns(['account_id', 'id']).execute()

  // Which clients may request which scope: what makes "a scope in use can't be deleted" a simple lookup.
  await db.schema
    .createTable('client_scopes')
    .addColumn('account_id', keyText, (c) => c.notNull())
    .addColumn('client_id', keyText, (c) => c.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('scope', keyText, (c) => c.notNull())
    .addPrimaryKeyConstraint('client_scopes_pk', ['account_id', 'scope', 'client_id'])
    .execute()

  await db.schema
    .createTable('scopes')
    .addColumn('account_id', keyText, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', keyText, (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('oidc', 'custom')`))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('scopes_pk', ['account_id', 'name'])
    .execute()

  await db.schema
    .createTable('events')
    .addColumn('id', keyText, (c) => c.primaryKey())
    .addColumn('account_id', keyText, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('type', keyText, (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('fanned_out_at', 'bigint')
    .addColumn('idempotency_key', 'text')
    .execute()
  // Retention, account by account from the oldest event.
  await db.schema.createIndex('events_account_idx').on('events').columns(['account_id', 'created_at', 'id']).execute()
  // The outbox: events waiting for fan-out, and only those.
  await db.schema.createIndex('events_unfanned_idx').on('events').column('created_at').where(sql.ref('fanned_out_at'), 'is', null).execute()
  await db.schema.createIndex('events_account_type_idx').on('events').columns(['account_id', 'type', 'id']).execute()
  // Listing an account's events, newest first (ids sort by creation time).
  await db.schema.createIndex('events_account_id_idx').on('events').columns(['account_id', 'id']).execute()

  await db.schema
    .createTable('token_revocations')
    .addColumn('account_id', keyText, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('jti', keyText, (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('token_revocations_pk', ['account_id', 'jti'])
    .execute()
  await db.schema.createIndex('token_revocations_expiry_idx').on('token_revocations').column('expires_at').execute()

  // RFC 7523 §3: a client assertion's jti is accepted once; the row lives until the assertion could no longer be used.
  await db.schema
    .createTable('client_assertion_jtis')
    .addColumn('account_id', keyText, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('client_id', keyText, (c) => c.notNull())
    .addColumn('jti', keyText, (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('client_assertion_jtis_pk', ['account_id', 'client_id', 'jti'])
    .execute()
  await db.schema.createIndex('client_assertion_jtis_expiry_idx').on('client_assertion_jtis').column('expires_at').execute()
}

/**
 * The webhook area: idempotency keys and custom event types, endpoints, subscriptions, deliveries and their attempts,
 * recovery jobs, the leases that count deliveries in flight, and the sweeps that change an endpoint's deliveries.
 */
async function createWebhookTables(db: Kysely<unknown>, dialect: BaselineDialect): Promise<void> {
  const { keyText } = dialect
  await db.schema
    .createTable('event_idempotency_keys')
    .addColumn('account_id', keyText, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('key', keyText, (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('event_idempotency_keys_pk', ['account_id', 'key'])
    .execute()
  await db.schema.createIndex('event_idempotency_keys_expiry_idx').on('event_idempotency_keys').column('expires_at').execute()

  await db.schema
    .createTable('custom_event_types')
    .addColumn('account_id', keyText, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', keyText, (c) => c.notNull())
    .addColumn('first_published_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('custom_event_types_pk', ['account_id', 'name'])
    .execute()

  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', keyText, (c) => c.primaryKey())
    .addColumn('account_id', keyText, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
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
    .addColumn('id', keyText, (c) => c.primaryKey())
    .addColumn('account_id', keyText, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('endpoint_id', keyText, (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('event_types', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('webhook_subscriptions_account_idx').on('webhook_subscriptions').columns(['account_id', 'id']).execute()
  await db.schema.createIndex('webhook_subscriptions_endpoint_idx').on('webhook_subscriptions').column('endpoint_id').execute()

  await createDeliveryTables(db, dialect)

  await db.schema
    .createTable('webhook_jobs')
    .addColumn('id', keyText, (c) => c.primaryKey())
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

  await db.schema
    .createTable('webhook_leases')
    .addColumn('lease_token', keyText, (c) => c.notNull())
    .addColumn('endpoint_id', keyText, (c) => c.notNull())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('outstanding', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_leases_pk', ['lease_token', 'endpoint_id'])
    .execute()
  await db.schema.createIndex('webhook_leases_endpoint_idx').on('webhook_leases').column('endpoint_id').execute()

  await db.schema
    .createTable('webhook_sweeps')
    .addColumn('id', keyText, (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('endpoint_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('release', 'hold', 'cancel')`))
    .addColumn('from_status', 'text', (c) => c.notNull().check(sql`from_status in ('pending', 'held')`))
    .addColumn('position', 'text')
    .execute()
}

/** Deliveries and their attempts. */
async function createDeliveryTables(db: Kysely<unknown>, { keyText, deliveriesStorage, attemptsReferenceAccounts }: BaselineDialect): Promise<void> {
  // Deliveries outlive their endpoint (cancelled, still listed), so endpoint_id is not a foreign key. A lease sets
  // columns outside every index (lease_token, leased_at, lease_expires_at), so that on PostgreSQL it can be a
  // heap-only update, which writes no index entry.
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', keyText, (c) => c.primaryKey())
    .addColumn('account_id', keyText, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('event_id', keyText, (c) => c.notNull())
    .addColumn('event_type', keyText, (c) => c.notNull())
    .addColumn('endpoint_id', keyText, (c) => c.notNull())
    .addColumn('status', keyText, (c) => c.notNull().check(sql`status in ('pending', 'succeeded', 'failed', 'held', 'cancelled')`))
    .addColumn('attempt_count', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('lease_token', 'text')
    .addColumn('leased_at', 'bigint')
    .addColumn('last_attempt_at', 'bigint')
    .addColumn('last_response_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('finished_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_expires_at', 'bigint')
    .$call((table) => (deliveriesStorage ? table.modifyEnd(deliveriesStorage) : table))
    .execute()
  // Listing: newest first within an account, optionally by endpoint, status or type (ids sort by creation time).
  await db.schema.createIndex('webhook_deliveries_account_idx').on('webhook_deliveries').columns(['account_id', 'id']).execute()
  await db.schema.createIndex('webhook_deliveries_endpoint_idx').on('webhook_deliveries').columns(['account_id', 'endpoint_id', 'id']).execute()
  await db.schema.createIndex('webhook_deliveries_status_idx').on('webhook_deliveries').columns(['account_id', 'status', 'id']).execute()
  await db.schema.createIndex('webhook_deliveries_type_idx').on('webhook_deliveries').columns(['account_id', 'event_type', 'id']).execute()
  await db.schema.createIndex('webhook_deliveries_event_idx').on('webhook_deliveries').columns(['event_id', 'endpoint_id']).execute()
  // Claiming: an endpoint's due deliveries in order. The claim reads pending deliveries through this index alone.
  await db.schema
    .createIndex('webhook_deliveries_queue_idx')
    .on('webhook_deliveries')
    .columns(['endpoint_id', 'next_attempt_at'])
    .where(sql.ref('status'), '=', 'pending')
    .execute()
  // The next two indexes also hold pending deliveries. Their `account_id <> ''`, true of every row, keeps claims off
  // them: the queries meant to use them state it (notForClaims in leases.ts), and a claim, which never names an
  // account, can't use them. Otherwise, with statistics taken while the queue was empty, the planner may answer a
  // claim through one of them and read the whole backlog each time.
  // The next due delivery anywhere, the queue's depth and age (metrics).
  await db.schema
    .createIndex('webhook_deliveries_due_idx')
    .on('webhook_deliveries')
    .column('next_attempt_at')
    .where(sql.ref('status'), '=', 'pending')
    .where(sql.ref('account_id'), '<>', '')
    .execute()
  // An endpoint's deliveries that did not succeed, for its listings of failures and for recovery jobs. Succeeded
  // deliveries, nearly all of an endpoint's, are left out: recording a success writes no entry in it.
  await db.schema
    .createIndex('webhook_deliveries_endpoint_status_idx')
    .on('webhook_deliveries')
    .columns(['account_id', 'endpoint_id', 'status', 'id'])
    .where(sql.ref('status'), '<>', 'succeeded')
    .where(sql.ref('account_id'), '<>', '')
    .execute()
  // Retention: each account's finished deliveries from the oldest, so that a run reads only what it deletes.
  await db.schema
    .createIndex('webhook_deliveries_retention_idx')
    .on('webhook_deliveries')
    .columns(['account_id', 'finished_at'])
    .where(sql.ref('finished_at'), 'is not', null)
    .execute()
  // An endpoint's held deliveries, which enabling it releases and deleting it cancels; the delivery path, which
  // never holds, writes nothing to it.
  await db.schema.createIndex('webhook_deliveries_held_idx').on('webhook_deliveries').column('endpoint_id').where(sql.ref('status'), '=', 'held').execute()

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('delivery_id', keyText, (c) => c.notNull())
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => (attemptsReferenceAccounts ? c.notNull().references('accounts.id').onDelete('cascade') : c.notNull()))
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('duration_ms', 'integer')
    .addColumn('response_status', 'integer')
    .addColumn('error', 'text')
    .addColumn('response_excerpt', 'text')
    .addPrimaryKeyConstraint('webhook_attempts_pk', ['delivery_id', 'number'])
    .execute()
}
