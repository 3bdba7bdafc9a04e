import type { FastifyBaseLogger } from 'fastify'

/**
 * A warning about a condition that recurs for as long as it lasts (the database is unreachable): logged when it
 * starts, then at most once per interval with the number of occurrences left out, so an outage under load writes a
 * few lines rather than one per request or retry.
 */
export class ThrottledWarning {
  #lastLoggedAt = Number.NEGATIVE_INFINITY
  #omitted = 0

  constructor(
    private readonly message: string,
    private readonly intervalMs = 10_000,
    /** Wall-clock time: this paces log lines, it schedules nothing. */
    private readonly now: () => number = Date.now,
  ) {}

  /** Logs `error` on `log` unless a line went out less than the interval ago. */
  report(log: FastifyBaseLogger, error: unknown): void {
    const now = this.now()
    if (now - this.#lastLoggedAt < this.intervalMs) {
      this.#omitted++
      return
    }
    log.warn({ err: error, ...(this.#omitted > 0 && { omitted: this.#omitted }) }, this.message)
    this.#lastLoggedAt = now
    this.#omitted = 0
  }
}
