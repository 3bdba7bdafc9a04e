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
