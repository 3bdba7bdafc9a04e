import type { Migration } from 'kysely'
import * as platform from './0001-platform.js'
import * as webhooks from './0002-webhooks.js'
import * as deliveryLeases from './0003-delivery-leases.js'
import * as retentionByAccount from './0004-retention-by-account.js'
import * as heldDeliveries from './0005-held-deliveries.js'
import * as listingIndexes from './0006-listing-indexes.js'
import * as bytewiseKeys from './0007-bytewise-keys.js'
import * as statusSweeps from './0008-status-sweeps.js'
import * as leaseRoom from './0009-lease-room.js'
import * as attemptsWithoutCheck from './0010-attempts-without-check.js'
import * as leaseFit from './0011-lease-fit.js'
import * as claimOnlyQueue from './0012-claim-only-queue.js'
import * as cacheChanges from './0013-cache-changes.js'

/** Every migration, in order. Names sort lexically; never rename or edit one that has shipped. */
export const migrations: Record<string, Migration> = {
  '0001-platform': platform,
  '0002-webhooks': webhooks,
  '0003-delivery-leases': deliveryLeases,
  '0004-retention-by-account': retentionByAccount,
  '0005-held-deliveries': heldDeliveries,
  '0006-listing-indexes': listingIndexes,
  '0007-bytewise-keys': bytewiseKeys,
  '0008-status-sweeps': statusSweeps,
  '0009-lease-room': leaseRoom,
  '0010-attempts-without-check': attemptsWithoutCheck,
  '0011-lease-fit': leaseFit,
  '0012-claim-only-queue': claimOnlyQueue,
  '0013-cache-changes': cacheChanges,
}
