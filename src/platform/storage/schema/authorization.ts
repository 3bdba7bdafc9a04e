export type ClientKind = 'management' | 'standard'

export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none'

/** Where a client came from: the management API, RFC 7591 registration, or a Client ID Metadata Document. */
export type ClientSource = 'management' | 'registration' | 'metadata_document'

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
  source: ClientSource
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
