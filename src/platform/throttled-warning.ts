import type { FastifyBaseLogger } from 'fastify'

/**
 * Warnings about conditions that recur, each under a key (an endpoint, say): a key's first occurrence is logged, then
 * at most one line per interval with `omitted`, the number left out since its last line, so a condition that lasts
 * writes a few lines rather than one per request or retry, and one key's run never hides another's.
 */
export class ThrottledWarnings {
  /** Per key, when its last line went out and what has been left out since; oldest line first. */
  readonly #lines = new Map<string, { at: number; omitted: number }>()

  constructor(
    private readonly message: string,
    private readonly intervalMs = 10_000,
    /** This paces log lines and schedules nothing: wall-clock time serves, or the caller's own clock. */
    private readonly now: () => number = Date.now,
  ) {}

  /** Logs `fields` under `key` unless a line for that key went out less than the interval ago. */
  report(log: FastifyBaseLogger, key: string, fields: Record<string, unknown>): void {
    const now = this.now()
    const last = this.#lines.get(key)
    if (last && now - last.at < this.intervalMs) {
      last.omitted++
      return
    }
    log.warn({ ...fields, ...(last && last.omitted > 0 && { omitted: last.omitted }) }, this.message)
    this.#forgetQuiet(now)
    // Set anew, so the map stays in the order of the keys' last lines.
    this.#lines.delete(key)
    this.#lines.set(key, { at: now, omitted: 0 })
  }

  /**
   * Keys whose interval has passed with nothing left out need no entry: the next occurrence is logged either way.
   * Those with a count to tell keep theirs until their next line, so the map holds only the keys that recur.
   */
  #forgetQuiet(now: number): void {
    for (const [key, line] of this.#lines) {
      if (now - line.at < this.intervalMs) return
      if (line.omitted === 0) this.#lines.delete(key)
    }
  }
}

/** A warning about one condition that recurs for as long as it lasts (the database is unreachable), throttled as one key. */
export class ThrottledWarning {
  readonly #warnings: ThrottledWarnings

  constructor(message: string, intervalMs?: number, now?: () => number) {
    this.#warnings = new ThrottledWarnings(message, intervalMs, now)
  }

  /** Logs `error` on `log` unless a line went out less than the interval ago. */
  report(log: FastifyBaseLogger, error: unknown): void {
    this.#warnings.report(log, '', { err: error })
  }
}
