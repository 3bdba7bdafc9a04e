import type { Dispatcher } from 'undici'
import { type Clock, toRfc3339 } from '../../platform/clock.js'
import { guardedRequest } from '../../platform/outbound/fetch.js'
import { classifyNetworkError } from '../../platform/outbound/guarded-agent.js'
import type { DeliveryTarget } from '../endpoints/endpoint-store.js'
import { type AttemptOutcome, type ClaimedDelivery, isSuccess } from './attempt.js'
import { parseRetryAfter } from './retry-schedule.js'
import { signatureHeader } from './signing.js'

export interface SenderOptions {
  /** The whole exchange: resolution, connection, response headers and the kept part of the body. */
  timeoutMs: number
  /** Bytes of the response body read and kept on the attempt; the rest is never read. */
  excerptBytes: number
}

export const DEFAULT_SENDER_OPTIONS: SenderOptions = { timeoutMs: 15_000, excerptBytes: 1024 }

const USER_AGENT = 'Herald-Webhooks/0.1'

/**
 * Sends one attempt of a delivery, signed afresh (Standard Webhooks), through the SSRF-guarded agent, and
 * reports what happened. It never throws: a refusal, a timeout or a reset is an outcome like a 500.
 */
export class Sender {
  constructor(
    private readonly agent: Dispatcher,
    private readonly clock: Clock,
    private readonly options: SenderOptions = DEFAULT_SENDER_OPTIONS,
  ) {}

  async send(delivery: ClaimedDelivery, target: DeliveryTarget): Promise<AttemptOutcome> {
    const startedAt = this.clock.now()
    const body = `{"type":${JSON.stringify(delivery.eventType)},"timestamp":"${toRfc3339(delivery.eventCreatedAt)}","data":${delivery.eventData}}`
    const keys = target.previous && target.previous.until > startedAt ? [target.secret, target.previous.secret] : [target.secret]
    const timestamp = Math.floor(startedAt / 1000)
    const began = performance.now()
    try {
      const response = await guardedRequest(this.agent, {
        url: target.url,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'webhook-id': delivery.eventId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader(keys, delivery.eventId, timestamp, body),
        },
        body,
        timeoutMs: this.options.timeoutMs,
        maxResponseBytes: this.options.excerptBytes,
      })
      return {
        delivery,
        startedAt,
        durationMs: Math.round(response.durationMs),
        responseStatus: response.status,
        error: null,
        responseExcerpt: response.bodyExcerpt,
        retryAfterSeconds: isSuccess(response.status) ? null : parseRetryAfter(response.headers['retry-after'], startedAt),
      }
    } catch (error) {
      return { delivery, startedAt, durationMs: Math.round(performance.now() - began), responseStatus: null, error: classifyNetworkError(error), responseExcerpt: null, retryAfterSeconds: null }
    }
  }
}
