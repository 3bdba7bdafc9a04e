import type { Generated } from 'kysely'

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
}

export type AccountStatus = 'active' | 'disabled'

export interface AccountsTable {
  id: string
  name: string
  status: AccountStatus
  /** The management client made with the account; `herald accounts reset-admin` replaces its secret. */
  admin_client_id: string
  created_at: number
  updated_at: number
}

export interface AccountSettingsTable {
  account_id: string
  /** Lifetimes in seconds. */
  access_token_ttl: number
  refresh_token_idle_ttl: number
  refresh_token_absolute_ttl: number
  id_token_ttl: number
  authorization_code_ttl: number
  default_audience: string | null
  access_token_signing_alg: SigningAlg
  /** JSON array: the delays in seconds before each retry of a webhook delivery. */
  webhook_retry_schedule: string
  /** How long finished deliveries and their events are kept. */
  webhook_retention_days: number
  /** Seconds an endpoint may fail without a single success before it is disabled. */
  webhook_disable_after: number
  updated_at: number
  /** The account's login and consent app (sign-in), where a logout is confirmed, and where errors are shown. */
  login_url: string | null
  consent_url: string | null
  logout_url: string | null
  error_url: string | null
  /** Seconds a login or consent challenge stays answerable, and a browser session lasts by default. */
  login_challenge_ttl: number
  session_ttl: number
  /** 0 or 1: authorization requests must come through PAR (RFC 9126 §5). */
  require_par: number
  /** Seconds a spent refresh token still answers with its successor (a retried request), rather than revoking its grant. */
  refresh_token_reuse_interval: number
}

export type SigningAlg = 'ES256' | 'RS256'

export interface SigningKeysTable {
  /** The JWK `kid`. */
  id: string
  account_id: string
  alg: SigningAlg
  /** The public JWK as JSON. */
  public_jwk: string
  /** The PKCS#8 private key, sealed by the SecretBox. */
  private_key: string
  created_at: number
  /** When the key starts signing; until then it is only published. */
  signs_from: number
  /** When a newer key took over signing; null while this key is the newest. */
  retires_at: number | null
  /** When the key leaves the JWKS: every token it could have signed has expired. */
  published_until: number | null
  revoked_at: number | null
}

export type ClientKind = 'management' | 'standard'
export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none'

export interface ClientsTable {
  id: string
  account_id: string
  name: string
  kind: ClientKind
  /** SHA-256 of the secret, base64url; see authorization/clients/secrets.ts for why a fast hash. */
  secret_hash: string | null
  token_endpoint_auth_method: TokenEndpointAuthMethod
  /** JSON array of grant type names. */
  grant_types: string
  /** Space-separated scopes the client may request. */
  scope: string
  /**
   * JSON of the remaining RFC 7591 metadata (redirect URIs, keys, audiences, CORS origins, contact URIs,
   * optional lifetimes): read as a whole with the client, never queried by field.
   */
  metadata: string
  /** Tokens issued before this instant are refused by management auth (a lost or rotated secret). */
  credentials_changed_at: number
  created_at: number
  updated_at: number
}

export interface ClientScopesTable {
  account_id: string
  client_id: string
  scope: string
}

export type ScopeKind = 'oidc' | 'custom'

export interface ScopesTable {
  account_id: string
  name: string
  description: string
  kind: ScopeKind
  created_at: number
  updated_at: number
}

/** The outbox: every change that webhooks may announce inserts its event here, in the same transaction. */
export interface EventsTable {
  id: string
  account_id: string
  type: string
  /** JSON document. */
  data: string
  created_at: number
  /** Set when the event's deliveries exist; null while it waits in the outbox for fan-out. */
  fanned_out_at: number | null
  /** The caller's key for a published event, for the record; uniqueness lives in event_idempotency_keys. */
  idempotency_key: string | null
}

export interface TokenRevocationsTable {
  account_id: string
  jti: string
  /** The token's own expiry: the record is pruned after it. */
  expires_at: number
  revoked_at: number
}

/** The `jti` of every client assertion (RFC 7523 §3) accepted while it could still be replayed. */
export interface ClientAssertionJtisTable {
  account_id: string
  client_id: string
  jti: string
  /** When the assertion stops being acceptable (its `exp` plus the clock tolerance): the row is pruned after it. */
  expires_at: number
}

/** A publisher's idempotency key: the event it made and a hash of the request, while a retry may still come. */
export interface EventIdempotencyKeysTable {
  account_id: string
  key: string
  event_id: string
  request_hash: string
  expires_at: number
}

export interface CustomEventTypesTable {
  account_id: string
  name: string
  first_published_at: number
}

export type EndpointStatus = 'active' | 'disabled'
/** Why an endpoint is disabled: by the account, after failing for too long, or because it answered 410 Gone. */
export type EndpointDisabledReason = 'manual' | 'failing' | 'gone'

export interface WebhookEndpointsTable {
  id: string
  account_id: string
  url: string
  description: string
  status: EndpointStatus
  disabled_reason: EndpointDisabledReason | null
  disabled_at: number | null
  /** JSON object of the account's own string labels. */
  metadata: string
  /** Deliveries per second, or null for no limit. */
  rate_limit: number | null
  /** Deliveries in flight at once, across every worker process. */
  max_in_flight: number
  /** The `whsec_` signing secret, sealed by the SecretBox. */
  secret: string
  /** The secret before the last rotation, sealed; it still signs until `previous_secret_expires_at`. */
  previous_secret: string | null
  previous_secret_expires_at: number | null
  /** When the current run of failures began; null after a success. */
  failing_since: number | null
  /** The rate limit's current one-second window and how many deliveries were claimed in it. */
  rate_window_start: number
  rate_window_count: number
  created_at: number
  updated_at: number
  /** Set on the endpoint that carries this client's back-channel logout tokens; null on the account's own endpoints. */
  client_id: string | null
}

export interface WebhookSubscriptionsTable {
  id: string
  account_id: string
  endpoint_id: string
  /** JSON array of exact type names, `prefix.*` patterns or `*`. */
  event_types: string
  created_at: number
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'held' | 'cancelled'

export interface WebhookDeliveriesTable {
  id: string
  account_id: string
  event_id: string
  event_type: string
  endpoint_id: string
  status: DeliveryStatus
  attempt_count: number
  /** When a pending delivery is due. A lease leaves it as it is (see lease_expires_at). */
  next_attempt_at: number | null
  /** The worker's claim on the delivery; a completion that doesn't carry it is discarded. */
  lease_token: string | null
  leased_at: number | null
  /** When the lease ends; a lease that runs out makes the delivery due again. Null when not leased. */
  lease_expires_at: number | null
  last_attempt_at: number | null
  last_response_status: number | null
  last_error: string | null
  /** When it became succeeded, failed or cancelled: retention counts from here. */
  finished_at: number | null
  created_at: number
}

/** One claim's deliveries to one endpoint that are still in flight: what counts against the endpoint's cap. */
export interface WebhookLeasesTable {
  lease_token: string
  endpoint_id: string
  /** The process that took the lease (see DeliveryQueue): it counts its own attempts in flight itself. */
  holder: string
  /** The lease's deliveries whose attempt is not yet recorded. */
  outstanding: number
  expires_at: number
}

export type SweepKind = 'release' | 'hold' | 'cancel'

/**
 * A change of an endpoint's status whose deliveries of one status are still being changed with it, a batch at a
 * time (see StatusSweeps).
 */
export interface WebhookSweepsTable {
  /** Time-ordered: the oldest sweep goes first. */
  id: string
  account_id: string
  endpoint_id: string
  kind: SweepKind
  from_status: 'pending' | 'held'
  /** The id of the last delivery the sweep has been through; null before the first batch. */
  position: string | null
}

export interface WebhookAttemptsTable {
  delivery_id: string
  /** 1 for the first attempt. */
  number: number
  account_id: string
  started_at: number
  duration_ms: number | null
  response_status: number | null
  /** The network error class when there was no response (`timeout`, `refused`, `worker_lost`, …). */
  error: string | null
  response_excerpt: string | null
}

export interface WebhookJobsTable {
  id: string
  account_id: string
  kind: 'recover'
  endpoint_id: string
  /** Deliveries created at or after this instant are re-queued. */
  since: number
  status: 'pending' | 'done'
  /** The last delivery id handled: a restarted job carries on after it. */
  position: string | null
  requeued: number
  created_at: number
  finished_at: number | null
}

/** A change in-process caches must forget (see ChangeFeed); PostgreSQL also records the writing transaction's id. */
export interface CacheChangesTable {
  seq: Generated<number>
  topic: string
  key: string
  changed_at: number
}

export type FlowStage = 'pushed' | 'login' | 'login_answered' | 'consent' | 'consent_answered' | 'code' | 'redeemed' | 'done'

/** One authorization request, from authorize (or PAR) to its code's redemption (see authorization/sign-in). */
export interface AuthorizationFlowsTable {
  id: string
  account_id: string
  client_id: string
  stage: FlowStage
  /** JSON: the validated authorization request. */
  request: string
  /** Digest of the browser cookie the flow is bound to; null while pushed. */
  browser: string | null
  /** Digest of the login or consent challenge the account's app answers now. */
  challenge: string | null
  /** Digest of what the browser or client presents next: the PAR request_uri, a verifier, or the code. */
  handle: string | null
  subject: string | null
  session_id: string | null
  /** JSON: the accepted login (auth_time, acr, amr, remember, context). */
  login: string | null
  /** JSON: the accepted consent (granted scope and audience, session claims, remember). */
  consent: string | null
  /** JSON: the error a login or consent reject asked for. */
  rejection: string | null
  /** The access token issued for the code, so a replayed code can revoke it. */
  access_token_jti: string | null
  access_token_expires_at: number | null
  /** When the current stage lapses; a redeemed flow (a grant) lives as long as its last token. */
  expires_at: number
  created_at: number
  updated_at: number
  /** When the grant was revoked: every token it issued is refused from then on. */
  revoked_at: number | null
}

/** A refresh token (stored as a digest), rotated on every use; `grant_id` is its authorization flow. */
export interface RefreshTokensTable {
  id: string
  account_id: string
  grant_id: string
  client_id: string
  token_hash: string
  /** Space-separated: what this token may still be refreshed for (never more than the grant's). */
  scope: string
  /** Seconds of disuse after which a token of the grant lapses, decided at the grant's first refresh token. */
  idle_ttl: number
  /** The idle lifetime from this token's issue, capped by the grant's absolute lifetime. */
  expires_at: number
  absolute_expires_at: number
  spent_at: number | null
  /** The successor's token, sealed, kept for the account's reuse interval. */
  successor: string | null
  created_at: number
}

/** A user's login remembered in a browser (the `herald_session` cookie holds its id and a secret). */
export interface BrowserSessionsTable {
  id: string
  account_id: string
  subject: string
  secret_hash: string
  auth_time: number
  acr: string | null
  /** JSON array of authentication method references. */
  amr: string
  /** 0 or 1: the login asked to be remembered, so later logins in the browser are skipped. */
  remembered: number
  expires_at: number
  ended_at: number | null
  created_at: number
  updated_at: number
}

/** A consent remembered for a subject and client. */
export interface ConsentsTable {
  account_id: string
  subject: string
  client_id: string
  /** Space-separated granted scopes. */
  scope: string
  /** JSON array of granted audiences. */
  audience: string
  /** JSON: the session claims given with the consent ({id_token, access_token}). */
  session: string
  /** Null: until revoked. */
  expires_at: number | null
  created_at: number
  updated_at: number
}

/** An RP-initiated logout waiting for the account's logout app, then for the browser's return. */
export interface LogoutRequestsTable {
  id: string
  account_id: string
  client_id: string | null
  /** The browser session the logout ends, if the browser had one (or the hint named one). */
  session_id: string | null
  subject: string | null
  stage: 'waiting' | 'accepted' | 'rejected' | 'done'
  /** JSON: post_logout_redirect_uri, state, ui_locales. */
  request: string
  /** Digest of the logout challenge. */
  challenge: string | null
  /** Digest of the verifier the browser brings back. */
  handle: string | null
  expires_at: number
  created_at: number
  updated_at: number
}

/** A client that took part in a browser session and has a back-channel logout endpoint: it is told when the session ends. */
export interface SessionClientsTable {
  account_id: string
  session_id: string
  client_id: string
  created_at: number
}

/** A single-use sign-in link to the console; only a digest of its code is kept. */
export interface ConsoleLinksTable {
  id: string
  account_id: string
  code_hash: string
  /** The management scopes the link grants, space-separated. */
  scope: string
  expires_at: number
  used_at: number | null
  created_at: number
}

/** An endpoint's attempts in one hour (see EndpointStats). */
export interface WebhookEndpointHoursTable {
  endpoint_id: string
  /** The hour's first millisecond. */
  hour: number
  account_id: string
  /** Answered 2xx. */
  succeeded: number
  /** Answered otherwise. */
  failed: number
  /** No answer: a network error, a timeout, a lost worker, a logout token that could not be signed. */
  errored: number
  /** Over the answered attempts. */
  duration_ms_sum: number
  duration_ms_max: number
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
    authorization_flows_challenge_idx: ['account_id', 'challenge'],
    authorization_flows_handle_idx: ['account_id', 'handle'],
    authorization_flows_expiry_idx: ['expires_at'],
  },
  browser_sessions: {
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
  webhook_endpoint_hours: { webhook_endpoint_hours_hour_idx: ['hour'] },
}
