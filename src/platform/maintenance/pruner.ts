import type { FastifyBaseLogger } from 'fastify'

export interface PruneTiming {
  /** Between runs while there is nothing to catch up on. */
  intervalMs: number
  /** After a full batch more are likely waiting: the next run comes this soon, but not at once. */
  catchUpMs: number
  /** At most this many rows per run, so one run never holds the database for long. */
  batch: number
}

export const DEFAULT_PRUNE_TIMING: PruneTiming = { intervalMs: 60_000, catchUpMs: 1000, batch: 1000 }

/** When the next run starts: soon after a full batch, else after the interval. */
export function nextPruneDelay(deleted: number, timing: PruneTiming): number {
  return deleted >= timing.batch ? timing.catchUpMs : timing.intervalMs
}

/**
 * Deletes rows that are no longer needed (expired revocations, used assertion ids) on a timer, one bounded
 * batch per run, catching up quickly after a full batch. A failed run is logged and retried at the next interval;
 * `stop` waits for a run in progress so the database can close after it.
 */
export class Pruner {
  #timer: NodeJS.Timeout | undefined
  #running: Promise<number> | undefined
  #stopped = true

  constructor(
    /** What is pruned, for the logs. */
    private readonly what: string,
    /** Deletes at most `limit` rows and answers how many went. */
    private readonly pruneBatch: (limit: number) => Promise<number>,
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

  /** One batch; answers how many rows went. */
  runOnce(): Promise<number> {
    return this.pruneBatch(this.timing.batch)
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
      if (deleted > 0) this.log.debug({ deleted }, `pruned ${this.what}`)
    } catch (error) {
      this.log.warn({ err: error }, `pruning ${this.what} failed; retrying at the next interval`)
    } finally {
      this.#running = undefined
    }
    this.#schedule(nextPruneDelay(deleted, this.timing))
  }
}
