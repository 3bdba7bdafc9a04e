import { toRfc3339 } from '../../platform/clock.js'
import type { EventsTable, WebhookAttemptsTable } from '../../platform/storage/schema.js'
import { eventPayload } from './payload.js'

/**
 * The request an attempt sent, as recorded (see SentRequest) and completed from the delivery: `webhook-id` is the
 * event's id and `webhook-timestamp` the attempt's start, in seconds, as the sender sets them.
 */
export interface SentRequestView {
  /** Null on attempts recorded before Herald kept it. */
  url: string | null
  /** Null when the attempt carried a back-channel logout token, not a signed event. */
  headers: {
    'webhook-id': string
    'webhook-timestamp': string
    /** Null on attempts recorded before Herald kept it. */
    'webhook-signature': string | null
  } | null
}

export interface AttemptView {
  number: number
  started_at: string
  duration_ms: number | null
  response_status: number | null
  error: string | null
  response_excerpt: string | null
  /** Null when the attempt sent nothing (`signing_failed`) or nothing is known of what it sent (`worker_lost`). */
  request: SentRequestView | null
}

/** What a delivery's page adds to the delivery: the body its attempts sent, and each attempt with its request. */
export interface DeliveryDetail {
  /** Null for a back-channel logout token (signed afresh per attempt, and not kept), or an event no longer kept. */
  body: string | null
  attempts: AttemptView[]
}

/** Errors of attempts whose request is not known: none was sent, or the worker died with it. */
const NOTHING_KNOWN_SENT = new Set(['signing_failed', 'worker_lost'])

/**
 * The detail of a delivery of the event `eventId` from its recorded attempts; `event` is the event's row (undefined
 * should it be gone). `clientEndpoint` says whether the delivery's endpoint carries a client's logout tokens
 * (undefined once the endpoint is deleted: then an attempt recorded with a URL and no signature tells).
 */
export function deliveryDetail(eventId: string, event: Pick<EventsTable, 'type' | 'data' | 'created_at'> | undefined, attempts: readonly WebhookAttemptsTable[], clientEndpoint: boolean | undefined): DeliveryDetail {
  const logoutTokens = clientEndpoint ?? attempts.some((attempt) => attempt.request_url !== null && attempt.request_signature === null)
  return {
    body: logoutTokens || !event ? null : eventPayload({ type: event.type, data: event.data, createdAt: event.created_at }),
    attempts: attempts.map((row) => ({
      number: row.number,
      started_at: toRfc3339(row.started_at),
      duration_ms: row.duration_ms,
      response_status: row.response_status,
      error: row.error,
      response_excerpt: row.response_excerpt,
      request: row.error !== null && NOTHING_KNOWN_SENT.has(row.error) ? null : { url: row.request_url, headers: logoutTokens ? null : signedEventHeaders(eventId, row) },
    })),
  }
}

function signedEventHeaders(eventId: string, row: WebhookAttemptsTable): NonNullable<SentRequestView['headers']> {
  return { 'webhook-id': eventId, 'webhook-timestamp': String(Math.floor(row.started_at / 1000)), 'webhook-signature': row.request_signature }
}
