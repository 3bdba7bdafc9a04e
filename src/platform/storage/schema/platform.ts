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
