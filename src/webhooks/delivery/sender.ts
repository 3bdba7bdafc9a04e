import type { Dispatcher } from 'undici'
import type { Clock } from '../../platform/clock.js'
import { guardedRequest } from '../../platform/outbound/fetch.js'
import { classifyNetworkError } from '../../platform/outbound/guarded-agent.js'
import type { DeliveryTarget } from '../endpoints/endpoint-store.js'
import { type AttemptOutcome, type ClaimedDelivery, isSuccess, type SentRequest } from './attempt.js'
import { eventPayload } from './payload.js'
import { parseRetryAfter } from './retry-schedule.js'
import { signatureHeader } from './signing.js'

export interface SenderOptions {
  /** The whole exchange: resolution, connection, response headers and the kept part of the body. */
  timeoutMs: number
  /** Bytes of the response body read and kept on the attempt; the rest is never read. */
  excerptBytes: number
}

export const DEFAULT_SENDER_OPTIONS: SenderOptions = { timeoutMs: 15_000, excerptBytes: 1024 }

/**
 * Signs the logout token (OpenID Connect Back-Channel Logout 1.0 §2.4) that an attempt to a client's logout endpoint
 * carries, from the `oauth.session.ended` event delivered; the authorization area provides it.
 */
export interface LogoutTokenSource {
  logoutToken(delivery: ClaimedDelivery, clientId: string, nowMs: number): Promise<string>
}

const USER_AGENT = 'Herald-Webhooks/0.1'

interface OutgoingRequest {
  headers: Record<string, string>
  body: string
  /** The `webhook-signature` header, kept on the attempt; null for a logout token. */
  signature: string | null
}

/**
 * Sends one attempt of a delivery through the SSRF-guarded agent, and reports what happened: an event signed afresh
 * (Standard Webhooks), or, to a client's logout endpoint, a logout token. It never throws: a refusal, a timeout or a
 * reset is an outcome like a 500.
 */
export class Sender {
  constructor(
    private readonly agent: Dispatcher,
    private readonly clock: Clock,
    private readonly options: SenderOptions,
    private readonly logoutTokens: LogoutTokenSource,
  ) {}

  async send(delivery: ClaimedDelivery, target: DeliveryTarget): Promise<AttemptOutcome> {
    const startedAt = this.clock.now()
    const began = performance.now()
    const failed = (error: string, sent: SentRequest | null): AttemptOutcome => ({ delivery, request: sent, startedAt, durationMs: Math.round(performance.now() - began), responseStatus: null, error, responseExcerpt: null, retryAfterSeconds: null })
    let request: OutgoingRequest
    try {
      request = target.clientId === null ? this.#signedEvent(delivery, target, startedAt) : await this.#logout(delivery, target.clientId, startedAt)
    } catch {
      // The account has no key for the client's algorithm, say: nothing was sent, and a later attempt may do.
      return failed('signing_failed', null)
    }
    const sent: SentRequest = { url: target.url.href, signature: request.signature }
    try {
      const response = await guardedRequest(this.agent, {
        url: target.url,
        method: 'POST',
        headers: { 'user-agent': USER_AGENT, ...request.headers },
        body: request.body,
        timeoutMs: this.options.timeoutMs,
        maxResponseBytes: this.options.excerptBytes,
      })
      return {
        delivery,
        request: sent,
        startedAt,
        durationMs: Math.round(response.durationMs),
        responseStatus: response.status,
        error: null,
        responseExcerpt: response.bodyExcerpt,
        retryAfterSeconds: isSuccess(response.status) ? null : parseRetryAfter(response.headers['retry-after'], startedAt),
      }
    } catch (error) {
      return failed(classifyNetworkError(error), sent)
    }
  }

  #signedEvent(delivery: ClaimedDelivery, target: DeliveryTarget, startedAt: number): OutgoingRequest {
    const body = eventPayload({ type: delivery.eventType, data: delivery.eventData, createdAt: delivery.eventCreatedAt })
    const keys = target.previous && target.previous.until > startedAt ? [target.secret, target.previous.secret] : [target.secret]
    const timestamp = Math.floor(startedAt / 1000)
    const signature = signatureHeader(keys, delivery.eventId, timestamp, body)
    return {
      headers: { 'content-type': 'application/json', 'webhook-id': delivery.eventId, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature },
      body,
      signature,
    }
  }

  /** Back-Channel Logout 1.0 §2.5: the token as the form parameter `logout_token`. */
  async #logout(delivery: ClaimedDelivery, clientId: string, startedAt: number): Promise<OutgoingRequest> {
    const token = await this.logoutTokens.logoutToken(delivery, clientId, startedAt)
    return { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ logout_token: token }).toString(), signature: null }
  }
}
