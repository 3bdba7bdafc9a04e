import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../../platform/clock.js'
import type { TokenRevocations } from './revocation-store.js'

export interface PruneTiming {
  /** Between runs while there is nothing to catch up on. */
  intervalMs: number
  /** After a full batch more are likely waiting: the next run comes this soon, but not at once. */
  catchUpMs: number
  /** At most this many records per run, so one run never holds the database for long. */
  batch: number
}

export const DEFAULT_PRUNE_TIMING: PruneTiming = { intervalMs: 60_000, catchUpMs: 1000, batch: 1000 }

/**
 * A record outlives its token by this margin, so a server whose clock lags the pruning one's still sees the
 * revocation for as long as it could still accept the token.
 */
export const PRUNE_GRACE_MS = 60_000

/** When the next run starts: soon after a full batch, else after the interval. */
export function nextPruneDelay(deleted: number, timing: PruneTiming): number {
  return deleted >= timing.batch ? timing.catchUpMs : timing.intervalMs
}

/**
 * Deletes the revocation records of expired tokens on a timer, one bounded batch per run. A failed run is
 * logged and retried at the next interval; `stop` waits for a run in progress so the database can close after.
 */
export class RevocationPruning {
  #timer: NodeJS.Timeout | undefined
  #running: Promise<number> | undefined
  #stopped = true

  constructor(
    private readonly revocations: TokenRevocations,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
    private readonly timing: PruneTiming = DEFAULT_PRUNE_TIMING,
  ) {}

  start(): void {
    this.#stopped = false
    this.#schedule(this.timing.intervalMs)
  }

  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#timer)
    // Its failure is already logged by the tick that started it.
    await this.#running?.catch(() => {})
  }

  /** One batch: the records of tokens that expired more than the grace margin ago. Returns how many went. */
  runOnce(): Promise<number> {
    return this.revocations.pruneExpired(this.clock.now() - PRUNE_GRACE_MS, this.timing.batch)
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return
    this.#timer = setTimeout(() => void this.#tick(), delayMs)
    this.#timer.unref()
  }

  async #tick(): Promise<void> {
    let deleted = 0
    try {
      this.#running = this.runOnce()
      deleted = await this.#running
      if (deleted > 0) this.log.debug({ deleted }, 'pruned expired token revocations')
    } catch (error) {
      this.log.warn({ err: error }, 'pruning expired token revocations failed; retrying at the next interval')
    } finally {
      this.#running = undefined
    }
    this.#schedule(nextPruneDelay(deleted, this.timing))
  }
}
