/** pending: waiting for its user code; verified: the code started a sign-in flow; denied; redeemed: tokens issued. */
export type DeviceStage = 'pending' | 'verified' | 'denied' | 'redeemed'

/** A device authorization request (RFC 8628 §3.1), from the device's request to its tokens. */
export interface DeviceAuthorizationsTable {
  id: string
  account_id: string
  client_id: string
  device_code_hash: string
  /** Digest of the normalized user code (see user-codes.ts). */
  user_code_hash: string
  /** Space-separated requested scopes, each allowed to the client. */
  scope: string
  stage: DeviceStage
  /** Seconds the device must wait between polls; slow_down adds 5 (RFC 8628 §3.5). */
  interval: number
  /** The sign-in flow the accepted user code started. */
  flow_id: string | null
  expires_at: number
  created_at: number
  updated_at: number
}

export type DeviceChallengeStage = 'waiting' | 'accepted' | 'rejected' | 'spent'

/** A browser's verification of a user code, answered by the account's app (the `device-requests` challenge). */
export interface DeviceChallengesTable {
  /** Also the id of the sign-in flow an accepted user code starts. */
  id: string
  account_id: string
  challenge_hash: string
  /** Digest of the flow cookie the verification is bound to. */
  browser: string
  /** The address of the browser that started it: wrong user codes are limited per address too. */
  address: string
  stage: DeviceChallengeStage
  /** Wrong user codes typed under this challenge; at 5 it is spent (RFC 8628 §5.1). */
  failed_attempts: number
  last_failed_at: number | null
  expires_at: number
  created_at: number
  updated_at: number
}
