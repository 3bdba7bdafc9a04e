import { describe, expect, it } from 'vitest'
import { backoffDelay } from './backoff.js'

describe('backoffDelay', () => {
  const policy = { baseMs: 100, maxMs: 1500 }

  it('doubles from the base, within the upper half of each step', () => {
    expect([1, 2, 3, 4].map((n) => backoffDelay(n, policy, () => 0))).toEqual([50, 100, 200, 400])
    expect([1, 2, 3, 4].map((n) => backoffDelay(n, policy, () => 1))).toEqual([100, 200, 400, 800])
  })

  it('never waits longer than the maximum, however many failures came before', () => {
    expect(backoffDelay(5, policy, () => 1)).toBe(1500)
    expect(backoffDelay(1000, policy, () => 1)).toBe(1500)
    expect(backoffDelay(1000, policy, () => 0)).toBe(750)
  })
})
