/** A delivery a worker holds under a lease, with what it needs to send it. */
export interface ClaimedDelivery {
  id: string
  accountId: string
  endpointId: string
  eventId: string
  eventType: string
  /** The event's `data` exactly as stored: JSON text, put into the body without parsing. */
  eventData: string
  eventCreatedAt: number
  /** 1 for the first attempt. */
  attemptNumber: number
  leaseToken: string
}

/**
 * What an attempt sent that can't be worked out later, recorded with it: the URL (an endpoint's may change) and the
 * `webhook-signature` header (a secret rotation would make a recomputed one differ); null for a logout token, which
 * carries none.
 */
export interface SentRequest {
  url: string
  signature: string | null
}

/** What one attempt found: a response status, or the class of network error that prevented one. */
export interface AttemptOutcome {
  delivery: ClaimedDelivery
  /** What it sent (or tried to: a refused connection counts); null when it could send nothing. */
  request: SentRequest | null
  startedAt: number
  durationMs: number | null
  responseStatus: number | null
  error: string | null
  responseExcerpt: string | null
  retryAfterSeconds: number | null
}

export function isSuccess(status: number | null): boolean {
  return status !== null && status >= 200 && status < 300
}
