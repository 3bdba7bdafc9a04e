import { describe, expect, it } from 'vitest'
import { nextAttemptAt, parseRetryAfter } from './retry-schedule.js'

const schedule = [5, 300, 1800]

describe('nextAttemptAt', () => {
  it('waits the n-th delay after the n-th attempt, within ±20%', () => {
    expect(nextAttemptAt(schedule, 1, 0, null, () => 0.5)).toBe(5000)
    expect(nextAttemptAt(schedule, 2, 0, null, () => 0)).toBe(240_000)
    expect(nextAttemptAt(schedule, 3, 0, null, () => 1)).toBe(2_160_000)
  })

  it('ends the schedule after its last delay', () => {
    expect(nextAttemptAt(schedule, 4, 0, null)).toBeNull()
  })

  it('lets Retry-After push a retry later, capped at a day, never earlier', () => {
    expect(nextAttemptAt(schedule, 1, 0, 60, () => 0.5)).toBe(60_000)
    expect(nextAttemptAt(schedule, 2, 0, 1, () => 0.5)).toBe(300_000)
    expect(nextAttemptAt(schedule, 1, 0, 10 ** 9, () => 0.5)).toBe(24 * 3600 * 1000)
  })
})

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates, and ignores the rest', () => {
    expect(parseRetryAfter('120', 0)).toBe(120)
    expect(parseRetryAfter('Thu, 01 Jan 1970 00:01:00 GMT', 0)).toBe(60)
    expect(parseRetryAfter('Thu, 01 Jan 1970 00:01:00 GMT', 120_000)).toBe(0)
    expect(parseRetryAfter('soon', 0)).toBeNull()
    expect(parseRetryAfter('-5', 0)).toBeNull()
    expect(parseRetryAfter(undefined, 0)).toBeNull()
  })
})
