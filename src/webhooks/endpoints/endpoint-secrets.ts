import type { Kysely } from 'kysely'
import { type Clock, optionalRfc3339 } from '../../platform/clock.js'
import { ProblemError } from '../../platform/http/problems.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { DB } from '../../platform/storage/schema.js'
import { transaction } from '../../platform/storage/transaction.js'
import { generateSecret, secretKey } from '../delivery/signing.js'
import { type EndpointStore, refuseManaged } from './endpoint-store.js'

/** How long a rotated-out secret keeps signing beside the new one, unless the rotation says otherwise. */
const DEFAULT_ROTATION_OVERLAP_SECONDS = 24 * 3600

const NO_SECRET = "it signs nothing: its deliveries are logout tokens, signed with the account's keys"

/** The signing secrets of an account's endpoints, sealed at rest (EndpointStore.seal): revealed and rotated here. */
export class EndpointSecrets {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly store: EndpointStore,
    private readonly clock: Clock,
  ) {}

  async reveal(accountId: string, endpointId: string): Promise<{ secret: string }> {
    const row = await this.store.existing(this.db, accountId, endpointId)
    refuseManaged(row, NO_SECRET)
    return { secret: this.store.open(row, row.secret) }
  }

  /**
   * A new secret (given or generated). The old one keeps signing beside it for `overlapSeconds`, so receivers
   * can switch without missing a delivery; each attempt carries one signature per valid secret.
   */
  async rotate(accountId: string, endpointId: string, options: { secret?: string; overlapSeconds?: number }): Promise<{ secret: string; previous_secret_expires_at: string | null }> {
    const secret = checkedSecret(options.secret)
    const overlapMs = (options.overlapSeconds ?? DEFAULT_ROTATION_OVERLAP_SECONDS) * 1000
    return transaction(this.db, async (tx) => {
      // Locked: of two rotations at once, the second keeps the first one's secret as the previous one.
      const row = await this.store.existing(tx.db, accountId, endpointId, true)
      refuseManaged(row, NO_SECRET)
      const now = this.clock.now()
      const previousUntil = overlapMs > 0 ? now + overlapMs : null
      await forAccount(tx.db, accountId)
        .updateTable('webhook_endpoints')
        .set({ secret: this.store.seal(accountId, endpointId, secret), previous_secret: previousUntil === null ? null : row.secret, previous_secret_expires_at: previousUntil, updated_at: now })
        .where('id', '=', endpointId)
        .execute()
      await this.store.changed(tx, accountId, endpointId)
      return { secret, previous_secret_expires_at: optionalRfc3339(previousUntil) }
    })
  }
}

/** `secret` when it is a valid whsec_ secret, a new one when none is given; 422 otherwise. */
export function checkedSecret(secret: string | undefined): string {
  const checked = secret ?? generateSecret()
  if (!secretKey(checked)) throw invalidSecret()
  return checked
}

function invalidSecret(): ProblemError {
  return new ProblemError('validation_failed', 'secret must be whsec_ followed by the base64 of 24 to 64 random bytes', [{ pointer: '/body/secret', message: 'is not a valid whsec_ secret' }])
}
