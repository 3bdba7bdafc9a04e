import type { Compilable, Kysely } from 'kysely'
import type { CacheInvalidation } from '../../platform/cache/invalidation.js'
import type { TtlCache } from '../../platform/cache/ttl-cache.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import { CompiledOnce } from '../../platform/storage/compiled-once.js'
import type { AuthorizationFlowsTable, DB, DeviceAuthorizationsTable, DeviceStage } from '../../platform/storage/schema.js'
import { type Tx, transaction } from '../../platform/storage/transaction.js'
import { type Flow, flowFromRow, secretDigest } from '../sign-in/flow-store.js'
import { DEVICE_MOVES } from './device-stages.js'

/** A device authorization as the grant and the verification use it. */
export interface DeviceAuthorization {
  id: string
  accountId: string
  /** The digest of its device code: what a poll finds it by. */
  deviceCodeHash: string
  clientId: string
  scope: string[]
  stage: DeviceStage
  /** Seconds between polls. */
  interval: number
  flowId: string | null
  expiresAt: number
}

export type NewDeviceAuthorization = Pick<DeviceAuthorizationsTable, 'id' | 'client_id' | 'device_code_hash' | 'user_code_hash' | 'scope' | 'interval' | 'expires_at'>

/** What a poll finds: the authorization, and the sign-in flow its user code started, if any. */
export interface PolledDevice {
  device: DeviceAuthorization
  flow: Flow | undefined
}

/**
 * The device authorizations of every account (RFC 8628). A poll reads its authorization and the sign-in flow it
 * started in one indexed statement; a stage moves only from the stage its reader saw (compare-and-set).
 *
 * A device spends most of its life waiting for its user to type the code, polling every few seconds, and nothing
 * about it changes meanwhile but through this store: its user code accepted or refused, its interval grown. While it
 * waits, a poll is answered from the `waiting` cache, which each of those changes invalidates (CacheInvalidation, in
 * every process). A stale entry can only answer `authorization_pending` once more; expiry is decided from the entry.
 */
export class DeviceStore {
  readonly #poll: CompiledOnce<'accountId' | 'deviceCodeHash', PollRow>
  /** Polls by device code digest, kept only while the device waits for its user code (no flow yet). */
  readonly #waiting: TtlCache<PolledDevice>

  constructor(
    private readonly db: Kysely<DB>,
    private readonly invalidation: CacheInvalidation,
  ) {
    this.#poll = new CompiledOnce(db, ['accountId', 'deviceCodeHash'], ({ accountId, deviceCodeHash }) => pollQuery(db, accountId, deviceCodeHash))
    this.#waiting = invalidation.cache('device_authorizations')
  }

  async insert(db: Kysely<DB>, accountId: string, row: NewDeviceAuthorization, now: number): Promise<void> {
    await forAccount(db, accountId)
      .insertInto('device_authorizations', { ...row, stage: 'pending', flow_id: null, created_at: now, updated_at: now })
      .execute()
  }

  /** The authorization a device code names, with the sign-in flow its user code started, if any. */
  async forPoll(accountId: string, deviceCode: string): Promise<PolledDevice | undefined> {
    const deviceCodeHash = secretDigest(deviceCode)
    const known = this.#waiting.get(deviceCodeHash, () => this.#read(accountId, deviceCodeHash))
    if (!(known instanceof Promise)) {
      // Cached, hence waiting; a digest is unique to one account's device code, and never found at another's.
      return known?.device.accountId === accountId ? known : undefined
    }
    const polled = await known
    if (polled && !isWaiting(polled)) this.#waiting.delete(deviceCodeHash)
    return polled
  }

  async #read(accountId: string, deviceCodeHash: string): Promise<PolledDevice | undefined> {
    const [row] = await this.#poll.execute({ accountId, deviceCodeHash })
    if (!row) return undefined
    const device: DeviceAuthorization = {
      id: row.device_id,
      accountId: row.device_account_id,
      deviceCodeHash,
      clientId: row.device_client_id,
      scope: scopeList(row.device_scope),
      stage: row.device_stage,
      interval: row.device_interval,
      flowId: row.device_flow_id,
      expiresAt: row.device_expires_at,
    }
    return { device, flow: row.id === null ? undefined : flowFromRow(row as AuthorizationFlowsTable) }
  }

  /** The authorization still waiting for this user code (by its digest); expired ones never match. */
  async pendingByUserCode(accountId: string, userCodeHash: string, now: number): Promise<DeviceAuthorization | undefined> {
    const row = await forAccount(this.db, accountId)
      .selectFrom('device_authorizations')
      .selectAll()
      .where('user_code_hash', '=', userCodeHash)
      .where('stage', '=', 'pending')
      .where('expires_at', '>', now)
      .executeTakeFirst()
    return row && fromRow(row)
  }

  /** Moves `device` on to `to` from the stage it was read in; false when another request moved it first. */
  async advance(tx: Tx, device: DeviceAuthorization, to: DeviceStage, changes: { flow_id?: string }, now: number): Promise<boolean> {
    DEVICE_MOVES.assertMove(device.stage, to)
    const result = await forAccount(tx.db, device.accountId)
      .updateTable('device_authorizations')
      .set({ ...changes, stage: to, updated_at: now })
      .where('id', '=', device.id)
      .where('stage', '=', device.stage)
      .executeTakeFirst()
    const moved = result.numUpdatedRows === 1n
    // Only a waiting device's polls are cached: later stages are read on every poll.
    if (moved && device.stage === 'pending') await this.invalidation.record(tx, 'device_authorizations', device.deviceCodeHash)
    return moved
  }

  /** RFC 8628 §3.5 slow_down: the device's interval grows by 5 s, once for each poll that came too early. */
  async slowDown(device: DeviceAuthorization, now: number): Promise<void> {
    await transaction(this.db, async (tx) => {
      await forAccount(tx.db, device.accountId)
        .updateTable('device_authorizations')
        .set((eb) => ({ interval: eb('interval', '+', SLOW_DOWN_SECONDS), updated_at: now }))
        .where('id', '=', device.id)
        .execute()
      await this.invalidation.record(tx, 'device_authorizations', device.deviceCodeHash)
    })
  }
}

/** A device whose user has yet to type its code: nothing but this store changes it (see DeviceStore). */
function isWaiting({ device, flow }: PolledDevice): boolean {
  return device.stage === 'pending' && flow === undefined
}

/** A poll's one read: the authorization by its device code's digest (a unique index), and its sign-in flow. */
function pollQuery(db: Kysely<DB>, accountId: string, deviceCodeHash: string) {
  return forAccount(db, accountId)
    .selectFrom('device_authorizations')
    .leftJoin('authorization_flows as flow', (join) => join.onRef('flow.id', '=', 'device_authorizations.flow_id').onRef('flow.account_id', '=', 'device_authorizations.account_id'))
    .selectAll('flow')
    .select([
      'device_authorizations.id as device_id',
      'device_authorizations.account_id as device_account_id',
      'device_authorizations.client_id as device_client_id',
      'device_authorizations.scope as device_scope',
      'device_authorizations.stage as device_stage',
      'device_authorizations.interval as device_interval',
      'device_authorizations.flow_id as device_flow_id',
      'device_authorizations.expires_at as device_expires_at',
    ])
    .where('device_authorizations.device_code_hash', '=', deviceCodeHash)
}

type PollRow = ReturnType<typeof pollQuery> extends Compilable<infer Row> ? Row : never

/** RFC 8628 §3.5: "the interval MUST be increased by 5 seconds for this and all subsequent requests". */
export const SLOW_DOWN_SECONDS = 5

function scopeList(scope: string): string[] {
  return scope === '' ? [] : scope.split(' ')
}

function fromRow(row: DeviceAuthorizationsTable): DeviceAuthorization {
  return {
    id: row.id,
    accountId: row.account_id,
    deviceCodeHash: row.device_code_hash,
    clientId: row.client_id,
    scope: scopeList(row.scope),
    stage: row.stage,
    interval: row.interval,
    flowId: row.flow_id,
    expiresAt: row.expires_at,
  }
}
