import { describe, expect, it } from 'vitest'
import { type AllocationLimits, type ClaimCandidate, allocateClaim } from './claim-allocation.js'

const SECOND = 1_700_000_000_000

function endpoint(id: string, overrides: Partial<ClaimCandidate> = {}): ClaimCandidate {
  return { id, max_in_flight: 10, rate_limit: null, rate_window_start: null, rate_window_count: 0, in_flight_elsewhere: null, ...overrides }
}

function limits(overrides: Partial<AllocationLimits> = {}): AllocationLimits {
  // random() = 0.99… keeps the order: each element swaps with itself.
  return { capacity: 100, second: SECOND, inFlightHere: new Map(), endpointsPerClaim: 200, random: () => 0.999999, ...overrides }
}

describe('allocateClaim', () => {
  it('gives each endpoint its in-flight cap less what is in flight here and elsewhere', () => {
    const allocation = allocateClaim([endpoint('a'), endpoint('b', { in_flight_elsewhere: '4' }), endpoint('c')], limits({ inFlightHere: new Map([['c', 7]]) }))
    expect(allocation.takes).toEqual([
      { endpointId: 'a', take: 10, rate: null },
      { endpointId: 'b', take: 6, rate: null },
      { endpointId: 'c', take: 3, rate: null },
    ])
    expect(allocation).toMatchObject({ rateLimited: false, capped: false })
  })

  it('skips an endpoint at its cap and reports the claim capped', () => {
    const allocation = allocateClaim([endpoint('full', { in_flight_elsewhere: 10 }), endpoint('free')], limits())
    expect(allocation.takes.map((take) => take.endpointId)).toEqual(['free'])
    expect(allocation.capped).toBe(true)
  })

  it('stops at the capacity, and reports the claim capped', () => {
    const allocation = allocateClaim([endpoint('a'), endpoint('b'), endpoint('c')], limits({ capacity: 15 }))
    expect(allocation.takes).toEqual([
      { endpointId: 'a', take: 10, rate: null },
      { endpointId: 'b', take: 5, rate: null },
    ])
    expect(allocation.capped).toBe(true)
  })

  it("counts a rate window only in its own second, and takes no more than the limit leaves", () => {
    const allocation = allocateClaim(
      [
        endpoint('fresh', { rate_limit: 4, rate_window_start: SECOND - 1000, rate_window_count: 4 }),
        endpoint('used', { rate_limit: 4, rate_window_start: SECOND, rate_window_count: 3 }),
        endpoint('spent', { rate_limit: 4, rate_window_start: SECOND, rate_window_count: 4 }),
      ],
      limits(),
    )
    expect(allocation.takes).toEqual([
      { endpointId: 'fresh', take: 4, rate: { used: 0 } },
      { endpointId: 'used', take: 1, rate: { used: 3 } },
    ])
    expect(allocation.rateLimited).toBe(true)
  })

  it('serves at most endpointsPerClaim endpoints, in the order the random draws give', () => {
    const candidates = ['a', 'b', 'c'].map((id) => endpoint(id))
    const allocation = allocateClaim(candidates, limits({ endpointsPerClaim: 2, random: () => 0 }))
    // With every draw 0, Fisher–Yates moves the first element to the end, one swap at a time: b, c, a.
    expect(allocation.takes.map((take) => take.endpointId)).toEqual(['b', 'c'])
    expect(allocation.capped).toBe(true)
    expect(candidates.map((candidate) => candidate.id)).toEqual(['a', 'b', 'c'])
  })
})
