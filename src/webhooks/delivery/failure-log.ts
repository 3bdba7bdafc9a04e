import type { FastifyBaseLogger } from 'fastify'
import { ThrottledWarnings } from '../../platform/throttled-warning.js'
import type { CompletionReport } from './completions.js'

/** An operator sees at most one line per endpoint and kind of failure in this long, then the count left out. */
export const FAILURE_LOG_INTERVAL_MS = 60_000

/**
 * The warnings an operator watching the log needs about deliveries: one ended `failed` (its retry schedule
 * exhausted), an endpoint was disabled. Each line names the account, endpoint and delivery, never a secret, URL or body:
 * the response excerpt, payload and endpoint URL stay in the API, behind the account's own credentials.
 */
export class FailureLog {
  readonly #failed: ThrottledWarnings
  readonly #disabled: ThrottledWarnings

  constructor(
    private readonly log: FastifyBaseLogger,
    /** The worker's clock, which paces the lines as it schedules the retries they report. */
    now: () => number,
  ) {
    this.#failed = new ThrottledWarnings('webhook delivery failed: its retry schedule is exhausted', FAILURE_LOG_INTERVAL_MS, now)
    this.#disabled = new ThrottledWarnings('webhook endpoint disabled', FAILURE_LOG_INTERVAL_MS, now)
  }

  /** Logs what a written batch of completions failed and disabled. */
  record({ failed, disabled }: Pick<CompletionReport, 'failed' | 'disabled'>): void {
    for (const { delivery, responseStatus, error } of failed) {
      this.#failed.report(this.log, delivery.endpointId, {
        account: delivery.accountId,
        endpoint: delivery.endpointId,
        delivery: delivery.id,
        event: delivery.eventId,
        eventType: delivery.eventType,
        attempts: delivery.attemptNumber,
        lastStatus: responseStatus,
        lastError: error,
      })
    }
    for (const { accountId, endpointId, reason } of disabled) {
      this.#disabled.report(this.log, endpointId, { account: accountId, endpoint: endpointId, reason })
    }
  }
}
