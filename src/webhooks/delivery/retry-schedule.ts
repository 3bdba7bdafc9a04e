/** Each scheduled delay is varied by up to this fraction either way, so retries of one outage don't arrive together. */
export const JITTER = 0.2
/** The longest wait a receiver's `Retry-After` can ask for; beyond it, the request is capped here. */
export const MAX_RETRY_AFTER_SECONDS = 24 * 3600

/**
 * When attempt `attemptNumber + 1` is due after attempt `attemptNumber` failed at `now`, or null when the
 * schedule is exhausted and the delivery has failed. `schedule[n - 1]` is the delay after the n-th attempt.
 * A receiver's `Retry-After` can push a retry later than the schedule says, never earlier.
 */
export function nextAttemptAt(
  schedule: readonly number[],
  attemptNumber: number,
  now: number,
  retryAfterSeconds: number | null,
  random: () => number = Math.random,
): number | null {
  const delay = schedule[attemptNumber - 1]
  if (delay === undefined) return null
  const jittered = delay * (1 - JITTER + 2 * JITTER * random())
  const requested = retryAfterSeconds === null ? 0 : Math.min(retryAfterSeconds, MAX_RETRY_AFTER_SECONDS)
  return now + Math.round(Math.max(jittered, requested) * 1000)
}

/** IMF-fixdate, the HTTP-date form senders must generate (RFC 9110 §5.6.7). */
const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/

/** RFC 9110 §10.2.3: delay-seconds or an HTTP-date, as seconds from `now`; anything else is ignored. */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | null {
  const text = (Array.isArray(value) ? value[0] : value)?.trim()
  if (text === undefined) return null
  if (/^\d{1,10}$/.test(text)) return Number(text)
  const date = HTTP_DATE.test(text) ? Date.parse(text) : Number.NaN
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000))
}
