import type { FastifyBaseLogger } from 'fastify'
import { type Backoff, backoffDelay } from '../../platform/backoff.js'
import { retryingDeadlocks } from '../../platform/storage/transaction.js'
import { isDatabaseUnavailable } from '../../platform/storage/unavailable.js'
import type { ThrottledWarning } from '../../platform/throttled-warning.js'
import type { WebhookMetrics } from '../metrics.js'
import type { AttemptOutcome } from './attempt.js'
import type { DeliveryQueue } from './delivery-queue.js'
import type { FailureLog } from './failure-log.js'

/** Outcomes written per batch at most; more wait for the next one. */
const WRITE_BATCH = 1000

/** What the writer asks of the worker whose attempts it records. */
interface OutcomeWriterHost {
  /** Attempts still being sent: a partial batch waits a little for them to join it only while there are some. */
  attemptsInFlight(): number
  /** Once stopped, a write that failed for want of the database is dropped: the leases run out instead. */
  stopped(): boolean
  /** A batch is about to be written: a claim that was short of room may take more now. */
  writing(): void
  /** A batch is written; `nextRetryAt` when the earliest retry it scheduled is due (null: it scheduled none). */
  written(nextRetryAt: number | null): void
}

/**
 * Writes one process's attempt outcomes in batches, one write at a time: at once when a batch is full or no attempt
 * is left to join it, else after `intervalMs`. While the database is unavailable the outcomes are kept and written
 * when it is back, after a back-off, so the receivers' answers count and the deliveries aren't sent again.
 */
export class OutcomeWriter {
  #pending: AttemptOutcome[] = []
  #timer: NodeJS.Timeout | undefined
  #writing: Promise<void> | undefined
  /** Writes that failed in a row because the database was unavailable: each waits longer before the next. */
  #failures = 0

  constructor(
    private readonly queue: Pick<DeliveryQueue, 'complete'>,
    private readonly metrics: Pick<WebhookMetrics, 'finished'>,
    private readonly log: FastifyBaseLogger,
    private readonly unavailable: ThrottledWarning,
    private readonly failureLog: Pick<FailureLog, 'record'>,
    private readonly backoff: Backoff,
    private readonly intervalMs: number,
    private readonly host: OutcomeWriterHost,
  ) {}

  /** An attempt has ended, with `outcome` to record unless its delivery was gone. */
  ended(outcome: AttemptOutcome | undefined): void {
    if (outcome) this.#pending.push(outcome)
    this.#schedule()
  }

  /** Resolves once no write is under way. */
  async settled(): Promise<void> {
    while (this.#writing) await this.#writing
  }

  /** Writes what is pending, once; a write that fails now is not tried again (the leases run out instead). */
  async close(): Promise<void> {
    clearTimeout(this.#timer)
    await this.#write()
    clearTimeout(this.#timer)
  }

  #schedule(): void {
    // After a failed write the next one waits for its back-off timer.
    if (this.#pending.length === 0 || this.#failures > 0) return
    if (this.#pending.length >= WRITE_BATCH || this.host.attemptsInFlight() === 0) {
      clearTimeout(this.#timer)
      this.#timer = undefined
      void this.#write()
    } else if (!this.#timer) {
      this.#writeAfter(this.intervalMs)
    }
  }

  #writeAfter(delayMs: number): void {
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      void this.#write()
    }, delayMs)
  }

  /** Writes the pending outcomes, each write taking what has accumulated. */
  async #write(): Promise<void> {
    // Checked again after every wait, with nothing awaited between the last check and `#writing` being set: two
    // writers waiting on one write must not both go ahead.
    while (this.#writing) await this.#writing
    const batch = this.#pending.splice(0, WRITE_BATCH)
    if (batch.length === 0) return
    this.host.writing()
    let retryInMs: number | undefined
    // An endpoint's deletion can deadlock with the write (see Endpoints.delete).
    this.#writing = retryingDeadlocks(() => this.queue.complete(batch))
      .then((report) => {
        this.#failures = 0
        for (const { status } of report.finished) this.metrics.finished(status)
        this.failureLog.record(report)
        this.host.written(report.nextRetryAt)
      })
      .catch((error: unknown) => {
        if (isDatabaseUnavailable(error) && !this.host.stopped()) {
          // Should a lease run out first and another worker claim the delivery, the write finds its token gone and
          // leaves the new owner's result alone.
          this.#pending.unshift(...batch)
          retryInMs = backoffDelay(++this.#failures, this.backoff)
          this.unavailable.report(this.log, error)
          return
        }
        // Nothing is lost: the leases run out and the deliveries are attempted again.
        this.log.warn({ err: error, attempts: batch.length }, 'could not record webhook attempts; their deliveries will be retried when their leases end')
      })
      .finally(() => {
        this.#writing = undefined
      })
    await this.#writing
    if (retryInMs !== undefined) {
      clearTimeout(this.#timer)
      this.#writeAfter(retryInMs)
    } else if (this.#pending.length > 0) {
      this.#schedule()
    }
  }
}
