import { describe, expect, it } from 'vitest'
import { RegistrationRateLimit } from './rate-limit.js'

describe('RegistrationRateLimit', () => {
  const start = Date.UTC(2026, 0, 1)

  it('allows the limit within an hour, then says how long to wait', () => {
    const limit = new RegistrationRateLimit()
    expect(limit.take('a', 2, start)).toBeUndefined()
    expect(limit.take('a', 2, start + 1000)).toBeUndefined()
    expect(limit.take('a', 2, start + 60_000)).toBe(3540)
    expect(limit.take('b', 2, start + 60_000)).toBeUndefined()
  })

  it('starts a new window an hour after the first attempt', () => {
    const limit = new RegistrationRateLimit()
    expect(limit.take('a', 1, start)).toBeUndefined()
    expect(limit.take('a', 1, start + 3_599_999)).toBe(1)
    expect(limit.take('a', 1, start + 3_600_000)).toBeUndefined()
  })

  it('forgets the oldest address past its bound', () => {
    const limit = new RegistrationRateLimit(2)
    limit.take('a', 1, start)
    limit.take('b', 1, start)
    limit.take('c', 1, start)
    expect(limit.take('a', 1, start)).toBeUndefined()
    expect(limit.take('c', 1, start)).toBe(3600)
  })
})
