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
  /** Where the attempt went; null when it sent nothing, or nothing known (recorded before Herald kept it, `worker_lost`). */
  request_url: string | null
  /** The `webhook-signature` header it carried; null as `request_url` is, and for a back-channel logout token. */
  request_signature: string | null
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
