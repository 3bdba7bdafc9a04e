import type { FastifyBaseLogger } from 'fastify'
import { type Backoff, backoffDelay } from '../../platform/backoff.js'
import type { AlarmClock } from '../../platform/clock.js'
import { retryingDeadlocks } from '../../platform/storage/transaction.js'
import { isDatabaseUnavailable } from '../../platform/storage/unavailable.js'
import { ThrottledWarning } from '../../platform/throttled-warning.js'
import type { EndpointStore } from '../endpoints/endpoint-store.js'
import type { StatusSweeps } from '../endpoints/status-sweeps.js'
import type { WebhookMetrics } from '../metrics.js'
import type { AttemptOutcome, ClaimedDelivery } from './attempt.js'
import type { DeliveryQueue } from './delivery-queue.js'
import { FAILURE_LOG_INTERVAL_MS, FailureLog } from './failure-log.js'
import type { FanOut } from './fan-out.js'
import { OutcomeWriter } from './outcome-writer.js'
import type { RecoveryJobs } from './recovery-jobs.js'
import type { Sender } from './sender.js'
import type { WakeSignal, WorkKind } from './wake.js'

export interface WorkerOptions {
  /** Attempts in flight at once in this process, over all endpoints. */
  concurrency: number
  /** Most deliveries leased by one claim, events fanned out or deliveries recovered per batch. */
  batch: number
  /** How long a claim holds a delivery: longer than an attempt's timeout plus a completion flush. */
  leaseMs: number
  /** Completions wait at most this long to be written together. */
  flushIntervalMs: number
  /** With nothing due, look again after this long even if no signal came (a lost NOTIFY, a peer's lease). */
  idlePollMs: number
}

/** Everything but what the configuration decides (see openWebhooks). */
export const DEFAULT_WORKER_OPTIONS: Omit<WorkerOptions, 'concurrency' | 'leaseMs'> = { batch: 500, flushIntervalMs: 10, idlePollMs: 5000 }

/**
 * After failed passes or writes in a row (the database went away), wait this long before the next: at most 1.5 s, so
 * work resumes soon after the database is back.
 */
const FAILURE_BACKOFF: Backoff = { baseMs: 100, maxMs: 1500 }
/**
 * An idle worker woken by a signal waits this long first, so a trickle of events (one publish per millisecond)
 * is claimed a few at a time rather than one pass per event.
 */
const COALESCE_MS = 2

/**
 * One process's delivery loop. A pass fans out waiting outbox events and advances recovery jobs and status sweeps
 * when a signal (or the fallback poll) says there may be some, then claims due deliveries up to the free
 * concurrency; attempts run concurrently and their outcomes are written in batches. Passes are driven by signals
 * (new work anywhere, a completed batch here), by an alarm on the clock at the next due delivery, and by a slow
 * fallback poll; signals that arrive during a pass fold into a single next pass.
 */
export class DeliveryWorker {
  #stopped = true
  #passing: Promise<void> | undefined
  #passWanted = false
  #outboxWaiting = true
  #jobsWaiting = true
  /** A signal's pass is about to start (COALESCE_MS): more signals just join it. */
  #coalescing = false
  #timer: NodeJS.Timeout | undefined
  /** When the next due delivery this worker knows of is due, and how to call off the alarm set for it. */
  #alarm: { at: number; cancel: () => void } | undefined
  #inFlight = 0
  /** `#inFlight` per endpoint: what the claims count against each endpoint's cap for this process. */
  readonly #inFlightTo = new Map<string, number>()
  readonly #sends = new Set<Promise<void>>()
  readonly #outcomes: OutcomeWriter
  /** The last claim left due deliveries for lack of room. */
  #capped = false
  /** Passes that failed in a row: each waits longer before the next try. */
  #passFailures = 0
  /** While the database is unavailable every pass, write and endpoint lookup fails: a line a minute says so. */
  readonly #unavailable: ThrottledWarning

  constructor(
    private readonly queue: DeliveryQueue,
    private readonly fanOut: FanOut,
    private readonly jobs: RecoveryJobs,
    private readonly sweeps: StatusSweeps,
    private readonly endpoints: EndpointStore,
    private readonly sender: Sender,
    private readonly metrics: WebhookMetrics,
    private readonly clock: AlarmClock,
    private readonly log: FastifyBaseLogger,
    wake: WakeSignal,
    private readonly options: WorkerOptions,
  ) {
    wake.on((kind) => this.wake(kind, COALESCE_MS))
    const now = () => clock.now()
    this.#unavailable = new ThrottledWarning('the webhook worker cannot reach the database; backing off', FAILURE_LOG_INTERVAL_MS, now)
    this.#outcomes = new OutcomeWriter(queue, metrics, log, this.#unavailable, new FailureLog(log, now), FAILURE_BACKOFF, options.flushIntervalMs, {
      attemptsInFlight: () => this.#inFlight,
      stopped: () => this.#stopped,
      // What the last claim had to leave can go out now, without waiting for the write: a claim counts this
      // process's attempts by what it is still sending, not by what is recorded (see DeliveryQueue.claim).
      writing: () => {
        if (this.#capped) this.wake('deliveries')
      },
      // The write knows when the retries it scheduled are due, busy or not: no look at the queue for them.
      written: (nextRetryAt) => {
        if (nextRetryAt !== null && !(this.#alarm && this.#alarm.at <= nextRetryAt)) this.#wakeAt(nextRetryAt)
      },
    })
  }

  start(): void {
    if (!this.#stopped) return
    this.#stopped = false
    this.wake()
  }

  /** Stops claiming, lets attempts in flight finish and writes their outcomes. */
  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#timer)
    this.#wakeAt(undefined)
    await this.#passing
    await Promise.all(this.#sends)
    await this.#outcomes.close()
  }

  get running(): boolean {
    return !this.#stopped
  }

  /**
   * Runs a pass for every kind of work after the one under way, as a signal would, and resolves once it, every
   * attempt in flight and the writes of their outcomes have finished. A due delivery still unsent then was held
   * back by the claim (a rate limit, a disabled account), not merely late.
   */
  async runPass(): Promise<void> {
    while (this.#passing) await this.#passing
    this.wake()
    while (this.#passing) await this.#passing
    while (this.#sends.size > 0) await Promise.all(this.#sends)
    await this.#outcomes.settled()
  }

  /**
   * Runs a pass for `kind` of work (any kind when undefined) after `delayMs`, or right after the one under way.
   */
  wake(kind?: WorkKind, delayMs = 0): void {
    if (this.#stopped) return
    if (kind === undefined || kind === 'events') this.#outboxWaiting = true
    if (kind === undefined || kind === 'jobs') this.#jobsWaiting = true
    if (this.#passing) {
      this.#passWanted = true
      return
    }
    if (delayMs > 0) {
      if (!this.#coalescing) {
        this.#coalescing = true
        // The signal's own kind is already noted; the timer only has to start the pass.
        this.#setTimer(delayMs, 'deliveries')
      }
      return
    }
    clearTimeout(this.#timer)
    this.#coalescing = false
    this.#passing = this.#pass().finally(() => {
      this.#passing = undefined
      // A signal that came after the pass last looked for one (while it worked out when to look next) would
      // otherwise wait for the timer: a publish's own wake-up, say, during the look at the next due time.
      if (this.#passWanted) this.wake('deliveries')
    })
  }

  async #pass(): Promise<void> {
    let rateLimited = false
    try {
      do {
        this.#passWanted = false
        if (this.#outboxWaiting) {
          this.#outboxWaiting = false
          while ((await this.fanOut.drainOutbox(this.options.batch)) === this.options.batch && !this.#stopped);
        }
        // One batch of a recovery job and one of an endpoint's status sweep per round, claims in between: a large
        // recovery or backlog must not hold up deliveries.
        if (this.#jobsWaiting) {
          // Cleared before the batches: a job queued while they run signals again, and is not lost.
          this.#jobsWaiting = false
          // A cancelling sweep can deadlock with the write of attempts to the deleted endpoint; it is run again.
          const swept = await retryingDeadlocks(() => this.sweeps.runBatch())
          if ((await this.jobs.runBatch(this.options.batch)) || swept) this.#jobsWaiting = this.#passWanted = true
        }
        rateLimited = await this.#claim()
      } while (this.#passWanted && !this.#stopped)
      await this.#scheduleNext(rateLimited)
      if (this.#passFailures > 0) this.log.info({ failedPasses: this.#passFailures }, 'the webhook worker has resumed')
      this.#passFailures = 0
    } catch (error) {
      this.#passFailures++
      this.#reportFailure(error, () => this.log.warn({ err: error }, 'webhook worker pass failed; retrying shortly'))
      this.#outboxWaiting = this.#jobsWaiting = true
      // Signals that came during the failed pass must not start the next one at once; the back-off's looks for everything.
      this.#passWanted = false
      this.#setTimer(backoffDelay(this.#passFailures, FAILURE_BACKOFF))
    }
  }

  /** Unavailability is expected to pass and is reported now and then; anything else is reported each time, by `otherwise`. */
  #reportFailure(error: unknown, otherwise: () => void): void {
    if (isDatabaseUnavailable(error)) this.#unavailable.report(this.log, error)
    else otherwise()
  }

  /** Claims what the free concurrency allows and starts sending; answers whether a rate limit held any back. */
  async #claim(): Promise<boolean> {
    const capacity = Math.min(this.options.concurrency - this.#inFlight, this.options.batch)
    if (this.#stopped) return false
    if (capacity <= 0) {
      this.#capped = true
      return false
    }
    const { deliveries, rateLimited, capped } = await this.queue.claim(capacity, this.options.leaseMs, this.#inFlightTo)
    this.#capped = capped
    for (const delivery of deliveries) this.#send(delivery)
    // A full claim suggests more is due: claim again as soon as this pass ends.
    if (deliveries.length === capacity) this.#passWanted = true
    return rateLimited
  }

  #send(delivery: ClaimedDelivery): void {
    this.#inFlight++
    this.#inFlightTo.set(delivery.endpointId, (this.#inFlightTo.get(delivery.endpointId) ?? 0) + 1)
    const sending = this.#attempt(delivery)
      .catch((error: unknown) => {
        this.#reportFailure(error, () => this.log.error({ err: error, delivery: delivery.id }, 'a webhook attempt failed unexpectedly; its lease will run out and it will be retried'))
        return undefined
      })
      .then((outcome) => {
        this.#inFlight--
        const left = this.#inFlightTo.get(delivery.endpointId)! - 1
        if (left === 0) this.#inFlightTo.delete(delivery.endpointId)
        else this.#inFlightTo.set(delivery.endpointId, left)
        this.#sends.delete(sending)
        if (outcome) this.metrics.attempted(outcome)
        this.#outcomes.ended(outcome)
      })
    this.#sends.add(sending)
  }

  async #attempt(delivery: ClaimedDelivery): Promise<AttemptOutcome | undefined> {
    const target = await this.endpoints.target(delivery.accountId, delivery.endpointId)
    // Deleted since the claim: the delivery is cancelled and its lease token gone, so there is nothing to record.
    if (!target) return undefined
    return this.sender.send(delivery, target)
  }

  async #scheduleNext(rateLimited: boolean): Promise<void> {
    if (this.#stopped) return
    if (rateLimited) {
      this.#setTimer(1000 - (this.clock.now() % 1000), 'deliveries')
      return
    }
    // An idle worker looks for the next due time (another process's lease, say); a busy one makes no query per
    // pass, and keeps the alarm of its last look, brought forward by each write that schedules an earlier retry.
    if (this.#inFlight === 0) {
      const due = await this.queue.nextDueAt()
      // Something due that this pass could not claim (caps held by other processes): a signal or the poll brings it.
      this.#wakeAt(due !== null && due > this.clock.now() ? due : undefined)
    }
    // Only the fallback poll looks for every kind of work; the alarm only needs a claim.
    this.#setTimer(this.options.idlePollMs)
  }

  /** Claims when the clock reaches `at` (undefined: no alarm), in place of the alarm set before. */
  #wakeAt(at: number | undefined): void {
    if (this.#alarm?.at === at) return
    this.#alarm?.cancel()
    this.#alarm = undefined
    if (at === undefined || this.#stopped) return
    const cancel = this.clock.setAlarm(at, () => {
      this.#alarm = undefined
      this.wake('deliveries')
    })
    this.#alarm = { at, cancel }
  }

  #setTimer(delayMs: number, kind?: WorkKind): void {
    if (this.#stopped) return
    clearTimeout(this.#timer)
    this.#timer = setTimeout(() => this.wake(kind), delayMs)
    this.#timer.unref()
  }
}
