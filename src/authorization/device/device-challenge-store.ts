import type { Kysely } from 'kysely'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { DB, DeviceChallengeStage, DeviceChallengesTable } from '../../platform/storage/schema.js'
import { secretDigest } from '../sign-in/flow-store.js'
import { DEVICE_CHALLENGE_MOVES } from './device-stages.js'

/** RFC 8628 §5.1: after this many wrong user codes a challenge is spent; the browser must start again. */
export const WRONG_CODES_PER_CHALLENGE = 5

export interface DeviceChallenge {
  id: string
  accountId: string
  /** Digest of the flow cookie of the browser that started it. */
  browser: string
  address: string
  stage: DeviceChallengeStage
  failedAttempts: number
  expiresAt: number
}

export type NewDeviceChallenge = Pick<DeviceChallengesTable, 'id' | 'challenge_hash' | 'browser' | 'address' | 'expires_at'>

/** The device challenges of every account: a browser's verification of a user code, answered by the account's app. */
export class DeviceChallengeStore {
  constructor(private readonly db: Kysely<DB>) {}

  async insert(db: Kysely<DB>, accountId: string, row: NewDeviceChallenge, now: number): Promise<void> {
    await forAccount(db, accountId)
      .insertInto('device_challenges', { ...row, stage: 'waiting', failed_attempts: 0, last_failed_at: null, created_at: now, updated_at: now })
      .execute()
  }

  async byChallenge(accountId: string, challenge: string): Promise<DeviceChallenge | undefined> {
    const row = await forAccount(this.db, accountId).selectFrom('device_challenges').selectAll().where('challenge_hash', '=', secretDigest(challenge)).executeTakeFirst()
    return row && { id: row.id, accountId: row.account_id, browser: row.browser, address: row.address, stage: row.stage, failedAttempts: row.failed_attempts, expiresAt: row.expires_at }
  }

  /** Moves `challenge` on from the stage it was read in; false when another answer came first. */
  async advance(db: Kysely<DB>, challenge: DeviceChallenge, to: DeviceChallengeStage, now: number): Promise<boolean> {
    DEVICE_CHALLENGE_MOVES.assertMove(challenge.stage, to)
    const result = await forAccount(db, challenge.accountId)
      .updateTable('device_challenges')
      .set({ stage: to, updated_at: now })
      .where('id', '=', challenge.id)
      .where('stage', '=', challenge.stage)
      .executeTakeFirst()
    return result.numUpdatedRows === 1n
  }

  /**
   * Counts a wrong user code against a waiting challenge, which the last allowed one spends; answers how many the
   * challenge has left (0: spent, or answered meanwhile).
   */
  async recordWrongCode(challenge: DeviceChallenge, now: number): Promise<number> {
    DEVICE_CHALLENGE_MOVES.assertMove('waiting', 'spent')
    const row = await forAccount(this.db, challenge.accountId)
      .updateTable('device_challenges')
      .set((eb) => ({
        failed_attempts: eb('failed_attempts', '+', 1),
        last_failed_at: now,
        updated_at: now,
        stage: eb.case().when('failed_attempts', '>=', WRONG_CODES_PER_CHALLENGE - 1).then(eb.val<DeviceChallengeStage>('spent')).else(eb.val<DeviceChallengeStage>('waiting')).end(),
      }))
      .where('id', '=', challenge.id)
      .where('stage', '=', 'waiting')
      .returning('failed_attempts')
      .executeTakeFirst()
    return row ? Math.max(0, WRONG_CODES_PER_CHALLENGE - row.failed_attempts) : 0
  }

  /**
   * The wrong user codes typed since `since` (RFC 8628 §5.1's rate limits), counted by challenge: in the whole
   * account, and through challenges that `address` started.
   */
  async wrongCodesSince(accountId: string, address: string, since: number): Promise<{ account: number; address: number }> {
    const row = await forAccount(this.db, accountId)
      .selectFrom('device_challenges')
      .select((eb) => [
        eb.fn.coalesce(eb.fn.sum<number | string>('failed_attempts'), eb.lit(0)).as('account'),
        eb.fn.coalesce(eb.fn.sum<number | string>(eb.case().when('address', '=', address).then(eb.ref('failed_attempts')).else(0).end()), eb.lit(0)).as('address'),
      ])
      .where('last_failed_at', '>', since)
      .executeTakeFirst()
    return { account: Number(row?.account ?? 0), address: Number(row?.address ?? 0) }
  }
}
