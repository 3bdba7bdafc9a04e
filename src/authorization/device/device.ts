import type { Kysely } from 'kysely'
import type { CacheInvalidation } from '../../platform/cache/invalidation.js'
import type { Clock } from '../../platform/clock.js'
import type { Outbox } from '../../platform/events/outbox.js'
import type { SettingsStore } from '../../platform/settings/settings.js'
import type { DB } from '../../platform/storage/schema.js'
import type { ClientStore } from '../clients/client-store.js'
import type { RefreshTokens } from '../grants/refresh-tokens.js'
import type { FlowStore } from '../sign-in/flow-store.js'
import type { UserTokens } from '../token/user-tokens.js'
import { DeviceChallengeStore } from './device-challenge-store.js'
import { DeviceCodeGrant } from './device-code-grant.js'
import { DeviceStore } from './device-store.js'
import { DeviceVerification } from './device-verification.js'
import { PollTimes } from './poll-policy.js'

/** The device authorization grant (RFC 8628): its requests, the browser's verification and the token grant. */
export interface Device {
  devices: DeviceStore
  verification: DeviceVerification
  grant: DeviceCodeGrant
}

export interface DeviceDeps {
  db: Kysely<DB>
  flows: FlowStore
  clients: ClientStore
  settings: SettingsStore
  userTokens: UserTokens
  refreshTokens: RefreshTokens
  outbox: Outbox
  invalidation: CacheInvalidation
  clock: Clock
  /** How many devices' last poll each process remembers (slow_down). */
  pollTimesCapacity: number
}

export function openDevice({ db, flows, clients, settings, userTokens, refreshTokens, outbox, invalidation, clock, pollTimesCapacity }: DeviceDeps): Device {
  const devices = new DeviceStore(db, invalidation)
  return {
    devices,
    verification: new DeviceVerification(db, new DeviceChallengeStore(db), devices, flows, clients, settings, outbox, clock),
    grant: new DeviceCodeGrant(db, devices, flows, userTokens, refreshTokens, new PollTimes(pollTimesCapacity)),
  }
}
