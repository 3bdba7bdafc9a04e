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
  updated_at: number
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
