import type { Generated } from 'kysely'

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
  /** Where the browser goes after a logout that names no post_logout_redirect_uri; null: Herald's own page. */
  post_logout_url: string | null
  /** Seconds a login or consent challenge stays answerable, and a browser session lasts by default. */
  login_challenge_ttl: number
  session_ttl: number
  /** 0 or 1: authorization requests must come through PAR (RFC 9126 §5). */
  require_par: number
  /** Seconds a spent refresh token still answers with its successor (a retried request), rather than revoking its grant. */
  refresh_token_reuse_interval: number
  /** The account's page where a user types a device's user code (RFC 8628 §3.3), and where the browser ends. */
  device_verification_url: string | null
  device_done_url: string | null
  /** Seconds a device code lives, and the interval a device polls at first (RFC 8628 §3.2). */
  device_code_ttl: number
  device_poll_interval: number
  /** 0 or 1: a client_id that is an https URL names a Client ID Metadata Document, fetched and cached. */
  client_id_metadata_documents: number
  /** RFC 7591 registration: `disabled`, behind an `initial_access_token`, or `open` to anyone (rate-limited). */
  registration: RegistrationMode
  /** The registration policy: the scopes (space-separated) and grant types (JSON array) a registered client may ask for at most. */
  registration_scope: string
  registration_grant_types: string
  /** How many registered clients the account may hold. */
  registration_max_clients: number
  /** Registered clients unused this many days are deleted; null keeps them. */
  registration_prune_after_days: number | null
  /** Open registration: at most this many registrations per source address and hour (per process). */
  registration_rate_limit: number
}

export type SigningAlg = 'ES256' | 'RS256'

export type RegistrationMode = 'disabled' | 'initial_access_token' | 'open'

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

/** A change in-process caches must forget (see ChangeFeed); PostgreSQL also records the writing transaction's id. */
export interface CacheChangesTable {
  seq: Generated<number>
  topic: string
  key: string
  changed_at: number
}

/** The public URL the last `herald serve` on this database served as (one row, id 1), which the CLI follows. */
export interface HeraldServerTable {
  id: number
  public_url: string
  started_at: number
}
