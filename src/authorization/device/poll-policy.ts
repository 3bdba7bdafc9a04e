import type { DeviceStage, FlowStage } from '../../platform/storage/schema.js'

/** What a device's poll of the token endpoint gets (RFC 8628 §3.5), or `redeem`: its tokens. */
export type PollAnswer = 'redeem' | 'authorization_pending' | 'slow_down' | 'access_denied' | 'expired_token' | 'used'

export interface PollState {
  deviceStage: DeviceStage
  /** The stage of the sign-in flow the user code started, if it did. */
  flowStage: FlowStage | undefined
  expiresAt: number
  /** Seconds the device must wait between polls. */
  interval: number
  /** When this process last saw the device poll, if it did. */
  lastPolledAt: number | undefined
}

/**
 * How much sooner than its interval a poll may arrive and still count as on time. A device waits the interval after
 * each answer (RFC 8628 §3.5); its polls reach Herald closer together than that only when the network delayed the
 * one before more, and a slow_down for that would lengthen its interval for good.
 */
export const POLL_TOLERANCE_MS = 500

/**
 * The answer to a poll, decided from what one read found. Once the user approved, the device gets its tokens even
 * if it polled early; before that, polling within the interval is `slow_down`. A flow that ended without a code
 * (a login or consent refused, a session ended) is a refusal, as is a user code refused at the device challenge.
 */
export function pollAnswer(state: PollState, now: number): PollAnswer {
  if (state.deviceStage === 'redeemed' || state.flowStage === 'redeemed') return 'used'
  if (state.expiresAt <= now) return 'expired_token'
  if (state.deviceStage === 'denied' || state.flowStage === 'done') return 'access_denied'
  if (state.flowStage === 'code') return 'redeem'
  if (state.lastPolledAt !== undefined && now - state.lastPolledAt < state.interval * 1000 - POLL_TOLERANCE_MS) return 'slow_down'
  return 'authorization_pending'
}

/**
 * When each device last polled this process, for slow_down without a write per poll. Bounded: the oldest entries
 * go first, and a device forgotten is one whose next early poll goes unnoticed, which costs it nothing it could
 * abuse (it still waits for its user). Processes behind a load balancer each keep their own (docs/authorization.md).
 */
export class PollTimes {
  readonly #times = new Map<string, number>()

  constructor(private readonly capacity: number) {}

  /** Records a poll at `now`; answers the one before it. */
  polled(deviceId: string, now: number): number | undefined {
    const last = this.#times.get(deviceId)
    this.#times.delete(deviceId)
    this.#times.set(deviceId, now)
    if (this.#times.size > this.capacity) this.#times.delete(this.#times.keys().next().value!)
    return last
  }

  forget(deviceId: string): void {
    this.#times.delete(deviceId)
  }
}
