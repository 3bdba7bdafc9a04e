import { describe, expect, it } from 'vitest'
import { POLL_TOLERANCE_MS, type PollState, PollTimes, pollAnswer } from './poll-policy.js'

const waiting: PollState = { deviceStage: 'pending', flowStage: undefined, expiresAt: 600_000, interval: 5, lastPolledAt: undefined }

describe('pollAnswer (RFC 8628 §3.5)', () => {
  it('is pending while the user has not approved, and slow_down within the interval', () => {
    expect(pollAnswer(waiting, 0)).toBe('authorization_pending')
    expect(pollAnswer({ ...waiting, lastPolledAt: 0 }, 1_000)).toBe('slow_down')
    expect(pollAnswer({ ...waiting, lastPolledAt: 0 }, 5_000 - POLL_TOLERANCE_MS - 1)).toBe('slow_down')
    // A poll the network brought a little early, though its device waited the interval after the last answer.
    expect(pollAnswer({ ...waiting, lastPolledAt: 0 }, 5_000 - POLL_TOLERANCE_MS)).toBe('authorization_pending')
    expect(pollAnswer({ ...waiting, deviceStage: 'verified', flowStage: 'consent', lastPolledAt: 0 }, 10_000)).toBe('authorization_pending')
  })

  it('redeems once the flow has its code, even after an early poll', () => {
    expect(pollAnswer({ ...waiting, deviceStage: 'verified', flowStage: 'code', lastPolledAt: 0 }, 1_000)).toBe('redeem')
  })

  it('refuses a denied device, a flow that ended, an expired code and a used one', () => {
    expect(pollAnswer({ ...waiting, deviceStage: 'denied' }, 0)).toBe('access_denied')
    expect(pollAnswer({ ...waiting, deviceStage: 'verified', flowStage: 'done' }, 0)).toBe('access_denied')
    expect(pollAnswer(waiting, 600_000)).toBe('expired_token')
    expect(pollAnswer({ ...waiting, deviceStage: 'verified', flowStage: 'code' }, 600_000)).toBe('expired_token')
    expect(pollAnswer({ ...waiting, deviceStage: 'redeemed', flowStage: 'redeemed' }, 0)).toBe('used')
  })
})

describe('PollTimes', () => {
  it('answers the previous poll and forgets the oldest device beyond its capacity', () => {
    const times = new PollTimes(2)
    expect(times.polled('a', 1)).toBeUndefined()
    expect(times.polled('a', 2)).toBe(1)
    times.polled('b', 3)
    times.polled('c', 4)
    expect(times.polled('a', 5)).toBeUndefined()
    expect(times.polled('c', 6)).toBe(4)
  })
})
