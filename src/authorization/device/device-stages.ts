import type { DeviceChallengeStage, DeviceStage } from '../../platform/storage/schema.js'
import { StageMachine } from '../stage-machine.js'

/**
 * A device authorization's states (RFC 8628): `pending` until a user types its user code, which starts a sign-in
 * flow (`verified`: the flow's stage now says whether the user approved); `redeemed` once the device got its tokens;
 * `denied` when the account's app refused the code at the device challenge. A login or consent refused later ends
 * the flow instead, which the device learns of from it.
 */
export const DEVICE_MOVES = new StageMachine<DeviceStage>('device authorization', {
  pending: ['verified', 'denied'],
  verified: ['redeemed'],
  denied: [],
  redeemed: [],
})

/**
 * A device challenge (the browser's verification): answered once, by an accepted user code or a rejection; `spent`
 * after five wrong codes (RFC 8628 §5.1).
 */
export const DEVICE_CHALLENGE_MOVES = new StageMachine<DeviceChallengeStage>('device challenge', {
  waiting: ['accepted', 'rejected', 'spent'],
  accepted: [],
  rejected: [],
  spent: [],
})
