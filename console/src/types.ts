// The management API's shapes the console reads, as the OpenAPI document (/openapi.json) describes them.

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'held' | 'cancelled'
export const DELIVERY_STATUSES: DeliveryStatus[] = ['pending', 'succeeded', 'failed', 'held', 'cancelled']

export interface Delivery {
  id: string
  event_id: string
  event_type: string
  endpoint_id: string
  status: DeliveryStatus
  attempt_count: number
  last_response_status: number | null
  last_error: string | null
  last_attempt_at: string | null
  next_attempt_at: string | null
  created_at: string
}

export interface Attempt {
  number: number
  started_at: string
  duration_ms: number | null
  response_status: number | null
  error: string | null
  response_excerpt: string | null
}

export interface Endpoint {
  id: string
  url: string
  description: string
  status: 'active' | 'disabled'
  disabled_reason: 'manual' | 'failing' | 'gone' | null
  disabled_at: string | null
  rate_limit: number | null
  max_in_flight: number
  /** Set when the endpoint carries that client's back-channel logout: its URL, secret and deletion go with the client. */
  client_id: string | null
  created_at: string
}

export interface Subscription {
  id: string
  endpoint_id: string
  event_types: string[]
  created_at: string
}

export interface HeraldEvent {
  id: string
  type: string
  data: unknown
  created_at: string
}

/** The account's settings as `GET /settings` answers them: lifetimes in seconds, null URLs unset. */
export interface Settings {
  access_token_ttl: number
  refresh_token_idle_ttl: number
  refresh_token_absolute_ttl: number
  id_token_ttl: number
  authorization_code_ttl: number
  session_ttl: number
  default_audience: string | null
  access_token_signing_alg: 'ES256' | 'RS256'
  webhook_retry_schedule: number[]
  webhook_retention_days: number
  webhook_disable_after: number
  login_url: string | null
  consent_url: string | null
  logout_url: string | null
  error_url: string | null
  login_challenge_ttl: number
  require_par: boolean
  refresh_token_reuse_interval: number
}

export interface StatsBucket {
  start: string
  succeeded: number
  failed: number
  errored: number
  mean_duration_ms: number | null
  max_duration_ms: number | null
}

export interface EndpointStats {
  endpoint_id: string
  bucket: 'hour' | 'day'
  since: string
  until: string
  data: StatsBucket[]
}
