/** The source of "now" for everything that expires or is scheduled, so tests can move time instead of sleeping. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number
}

/** A clock that also wakes a sleeper at a time of its own reckoning: a test that moves time moves the wake-ups with it. */
export interface AlarmClock extends Clock {
  /** Calls `wake` once the clock reads `at` or later; answers a function that cancels the call. Keeps no process alive. */
  setAlarm(at: number, wake: () => void): () => void
}

/** The longest a Node timer waits: a later alarm wakes early, and its sleeper sets it again. */
const LONGEST_TIMER_MS = 2 ** 31 - 1

export const systemClock: AlarmClock = {
  now: () => Date.now(),
  setAlarm(at, wake) {
    const timer = setTimeout(wake, Math.min(Math.max(0, at - Date.now()), LONGEST_TIMER_MS))
    timer.unref()
    return () => clearTimeout(timer)
  },
}

export function toRfc3339(epochMs: number): string {
  return new Date(epochMs).toISOString()
}

export function optionalRfc3339(epochMs: number | null): string | null {
  return epochMs === null ? null : toRfc3339(epochMs)
}

/**
 * RFC 3339 §5.6 `date-time`: the offset is `Z` or `±hh:mm`; `T` and `Z` may be lowercase, and a space may stand for
 * the `T` (the RFC's note allows it, and ajv-formats accepted it before this parser replaced its format).
 */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/
/** The instants whose date-time in UTC has a four-digit year, the only ones toRfc3339 writes back as RFC 3339. */
const EARLIEST = Date.parse('0000-01-01T00:00:00.000Z')
const LATEST = Date.parse('9999-12-31T23:59:59.999Z')

/**
 * The instant an RFC 3339 date-time names, in milliseconds since the epoch; undefined when `text` is not one or the
 * instant falls outside the years 0000–9999 in UTC. A leap second (second 60, which RFC 3339 allows and `Date.parse`
 * answers with NaN) is read as the start of the next minute, as POSIX time counts it. Digits past milliseconds are
 * dropped.
 */
export function parseRfc3339(text: string): number | undefined {
  const match = DATE_TIME.exec(text)
  if (!match) return undefined
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  const offsetHours = Number(match[9] ?? 0)
  const offsetMinutes = Number(match[10] ?? 0)
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 60) return undefined
  if (offsetHours > 23 || offsetMinutes > 59) return undefined
  const date = new Date(0)
  // setUTCFullYear, unlike Date.UTC, takes years 0–99 as they are; setUTCHours carries second 60 into the next minute.
  date.setUTCFullYear(year, month - 1, day)
  date.setUTCHours(hour, minute, second, Number((match[7] ?? '').slice(0, 3).padEnd(3, '0')))
  const epochMs = date.getTime() - (match[8] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000
  return epochMs >= EARLIEST && epochMs <= LATEST ? epochMs : undefined
}

/** parseRfc3339 of text that a schema's `date-time` format (which parseRfc3339 defines) has already accepted. */
export function rfc3339ToEpochMs(text: string): number {
  const epochMs = parseRfc3339(text)
  if (epochMs === undefined) throw new Error(`${text} is not an RFC 3339 date-time that validation should have let through`)
  return epochMs
}

function daysInMonth(year: number, month: number): number {
  const date = new Date(0)
  date.setUTCFullYear(year, month, 0)
  return date.getUTCDate()
}
