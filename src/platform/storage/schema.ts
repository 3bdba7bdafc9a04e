import type { AccountsTable, AccountSettingsTable, SigningKeysTable, ConsoleLinksTable, CacheChangesTable, HeraldServerTable } from './schema/platform.js'
import type { ClientsTable, ClientScopesTable, ScopesTable, TokenRevocationsTable, ClientAssertionJtisTable, RefreshTokensTable } from './schema/authorization.js'
import type { AuthorizationFlowsTable, BrowserSessionsTable, ConsentsTable, LogoutRequestsTable, SessionClientsTable } from './schema/sign-in.js'
import type { DeviceAuthorizationsTable, DeviceChallengesTable } from './schema/device.js'
import type { RegistrationTokensTable, ClientRegistrationsTable } from './schema/registration.js'
import type { EventsTable, EventIdempotencyKeysTable, CustomEventTypesTable, WebhookEndpointsTable, WebhookSubscriptionsTable, WebhookDeliveriesTable, WebhookLeasesTable, WebhookSweepsTable, WebhookAttemptsTable, WebhookJobsTable, WebhookEndpointHoursTable } from './schema/webhooks.js'

export type * from './schema/platform.js'
export type * from './schema/authorization.js'
export type * from './schema/sign-in.js'
export type * from './schema/webhooks.js'
export type * from './schema/device.js'
export type * from './schema/registration.js'

/**
 * The database as Kysely sees it. Portable representations on both dialects: timestamps are integer epoch
 * milliseconds (`bigint` on PostgreSQL, parsed to numbers), enumerations and JSON documents are text.
 */
export interface DB {
  accounts: AccountsTable
  account_settings: AccountSettingsTable
  signing_keys: SigningKeysTable
  clients: ClientsTable
  client_scopes: ClientScopesTable
  scopes: ScopesTable
  events: EventsTable
  token_revocations: TokenRevocationsTable
  client_assertion_jtis: ClientAssertionJtisTable
  event_idempotency_keys: EventIdempotencyKeysTable
  custom_event_types: CustomEventTypesTable
  webhook_endpoints: WebhookEndpointsTable
  webhook_subscriptions: WebhookSubscriptionsTable
  webhook_deliveries: WebhookDeliveriesTable
  webhook_attempts: WebhookAttemptsTable
  webhook_jobs: WebhookJobsTable
  webhook_leases: WebhookLeasesTable
  webhook_sweeps: WebhookSweepsTable
  cache_changes: CacheChangesTable
  authorization_flows: AuthorizationFlowsTable
  browser_sessions: BrowserSessionsTable
  consents: ConsentsTable
  refresh_tokens: RefreshTokensTable
  logout_requests: LogoutRequestsTable
  session_clients: SessionClientsTable
  console_links: ConsoleLinksTable
  webhook_endpoint_hours: WebhookEndpointHoursTable
  herald_server: HeraldServerTable
  device_authorizations: DeviceAuthorizationsTable
  device_challenges: DeviceChallengesTable
  registration_tokens: RegistrationTokensTable
  client_registrations: ClientRegistrationsTable
}

/**
 * Every index but the primary keys, by table, with the columns it orders by (partial ones cover only some rows: see
 * the migrations). test/platform/migrations.test.ts checks a migrated database against these and the interfaces
 * above. PostgreSQL's `cache_changes` also has a transaction id (`txid`) and an index on it, which only raw SQL reads
 * (see ChangeFeed).
 */
export const INDEXES: { readonly [Table in keyof DB]: Readonly<Record<string, readonly (keyof DB[Table] & string)[]>> } = {
  accounts: {},
  account_settings: {},
  signing_keys: { signing_keys_account_idx: ['account_id', 'alg', 'signs_from'] },
  clients: { clients_account_idx: ['account_id', 'id'] },
  client_scopes: {},
  scopes: {},
  events: {
    events_account_idx: ['account_id', 'created_at', 'id'],
    events_account_id_idx: ['account_id', 'id'],
    events_account_type_idx: ['account_id', 'type', 'id'],
    events_unfanned_idx: ['created_at'],
  },
  token_revocations: { token_revocations_expiry_idx: ['expires_at'] },
  client_assertion_jtis: { client_assertion_jtis_expiry_idx: ['expires_at'] },
  event_idempotency_keys: { event_idempotency_keys_expiry_idx: ['expires_at'] },
  custom_event_types: {},
  webhook_endpoints: { webhook_endpoints_account_idx: ['account_id', 'id'], webhook_endpoints_client_idx: ['account_id', 'client_id'] },
  webhook_subscriptions: {
    webhook_subscriptions_account_idx: ['account_id', 'id'],
    webhook_subscriptions_endpoint_idx: ['endpoint_id'],
  },
  webhook_deliveries: {
    webhook_deliveries_account_idx: ['account_id', 'id'],
    webhook_deliveries_endpoint_idx: ['account_id', 'endpoint_id', 'id'],
    webhook_deliveries_status_idx: ['account_id', 'status', 'id'],
    webhook_deliveries_type_idx: ['account_id', 'event_type', 'id'],
    webhook_deliveries_event_idx: ['event_id', 'endpoint_id'],
    webhook_deliveries_queue_idx: ['endpoint_id', 'next_attempt_at'],
    webhook_deliveries_due_idx: ['next_attempt_at'],
    webhook_deliveries_endpoint_status_idx: ['account_id', 'endpoint_id', 'status', 'id'],
    webhook_deliveries_retention_idx: ['account_id', 'finished_at'],
    webhook_deliveries_held_idx: ['endpoint_id'],
  },
  webhook_attempts: {},
  webhook_jobs: { webhook_jobs_pending_idx: ['created_at'] },
  webhook_leases: { webhook_leases_endpoint_idx: ['endpoint_id'] },
  webhook_sweeps: {},
  cache_changes: { cache_changes_changed_at_idx: ['changed_at'] },
  authorization_flows: {
    authorization_flows_account_idx: ['account_id', 'id'],
    authorization_flows_challenge_idx: ['account_id', 'challenge'],
    authorization_flows_handle_idx: ['account_id', 'handle'],
    authorization_flows_expiry_idx: ['expires_at'],
    authorization_flows_subject_idx: ['account_id', 'subject'],
    authorization_flows_session_idx: ['account_id', 'session_id'],
  },
  browser_sessions: {
    browser_sessions_account_idx: ['account_id', 'id'],
    browser_sessions_subject_idx: ['account_id', 'subject', 'id'],
    browser_sessions_expiry_idx: ['expires_at'],
  },
  consents: { consents_expiry_idx: ['expires_at'] },
  refresh_tokens: {
    refresh_tokens_hash_idx: ['account_id', 'token_hash'],
    refresh_tokens_grant_idx: ['grant_id'],
    refresh_tokens_expiry_idx: ['expires_at'],
  },
  logout_requests: {
    logout_requests_challenge_idx: ['account_id', 'challenge'],
    logout_requests_handle_idx: ['account_id', 'handle'],
    logout_requests_expiry_idx: ['expires_at'],
  },
  session_clients: { session_clients_client_idx: ['client_id'] },
  console_links: { console_links_code_idx: ['account_id', 'code_hash'], console_links_expiry_idx: ['expires_at'] },
  herald_server: {},
  webhook_endpoint_hours: { webhook_endpoint_hours_hour_idx: ['hour'] },
  device_authorizations: {
    device_authorizations_device_code_idx: ['account_id', 'device_code_hash'],
    device_authorizations_user_code_idx: ['account_id', 'user_code_hash'],
    device_authorizations_expiry_idx: ['expires_at'],
  },
  device_challenges: {
    device_challenges_challenge_idx: ['account_id', 'challenge_hash'],
    device_challenges_failures_idx: ['account_id', 'last_failed_at'],
    device_challenges_expiry_idx: ['expires_at'],
  },
  registration_tokens: {
    registration_tokens_account_idx: ['account_id', 'id'],
    registration_tokens_hash_idx: ['account_id', 'token_hash'],
    registration_tokens_expiry_idx: ['expires_at'],
  },
  client_registrations: { client_registrations_last_used_idx: ['last_used_at'] },
}
