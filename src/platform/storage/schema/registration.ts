/** An initial access token (RFC 7591 §3): lets its bearer register clients, a few times, until it expires. */
export interface RegistrationTokensTable {
  id: string
  account_id: string
  /** SHA-256 of the token, base64url: the token itself is shown once, when it is made. */
  token_hash: string
  /** Space-separated: the most a client registered with it may ask for, within the account's policy; null for the policy's own. */
  scope: string | null
  /** JSON array of grant types, likewise; null for the policy's own. */
  grant_types: string | null
  max_uses: number
  uses: number
  expires_at: number
  created_at: number
}

/** A client made by RFC 7591 registration: the digest of its registration access token (RFC 7592) and when it was last used. */
export interface ClientRegistrationsTable {
  account_id: string
  client_id: string
  access_token_hash: string
  /** The initial access token it was registered with, if any (the token may since be gone). */
  initial_token_id: string | null
  /** What it registered under (the account's policy and its initial access token): its updates stay within it, and within the policy as it is then. */
  scope_ceiling: string
  /** JSON array. */
  grant_types_ceiling: string
  /** When the client last got a token, to the day at best (see ClientUse); its registration time until then. */
  last_used_at: number
  created_at: number
}
