import type { Compilable, Kysely } from 'kysely'
import { forAccount } from '../../platform/storage/account-queries.js'
import { CompiledOnce } from '../../platform/storage/compiled-once.js'
import type { AuthorizationFlowsTable, DB, DeviceAuthorizationsTable, DeviceStage } from '../../platform/storage/schema.js'
import { type Flow, flowFromRow, secretDigest } from '../sign-in/flow-store.js'
import { DEVICE_MOVES } from './device-stages.js'

/** A device authorization as the grant and the verification use it. */
export interface DeviceAuthorization {
  id: string
  accountId: string
  clientId: string
  scope: string[]
  stage: DeviceStage
  /** Seconds between polls. */
  interval: number
  flowId: string | null
  expiresAt: number
}

export type NewDeviceAuthorization = Pick<DeviceAuthorizationsTable, 'id' | 'client_id' | 'device_code_hash' | 'user_code_hash' | 'scope' | 'interval' | 'expires_at'>

/**
 * The device authorizations of every account (RFC 8628). A poll reads its authorization and the sign-in flow it
 * started in one indexed statement; a stage moves only from the stage its reader saw (compare-and-set).
 */
export class DeviceStore {
  readonly #poll: CompiledOnce<'accountId' | 'deviceCodeHash', PollRow>

  constructor(private readonly db: Kysely<DB>) {
    this.#poll = new CompiledOnce(db, ['accountId', 'deviceCodeHash'], ({ accountId, deviceCodeHash }) => pollQuery(db, accountId, deviceCodeHash))
  }

  async insert(db: Kysely<DB>, accountId: string, row: NewDeviceAuthorization, now: number): Promise<void> {
    await forAccount(db, accountId)
      .insertInto('device_authorizations', { ...row, stage: 'pending', flow_id: null, created_at: now, updated_at: now })
      .execute()
  }

  /** The authorization a device code names, with the sign-in flow its user code started, if any. */
  async forPoll(accountId: string, deviceCode: string): Promise<{ device: DeviceAuthorization; flow: Flow | undefined } | undefined> {
    const [row] = await this.#poll.execute({ accountId, deviceCodeHash: secretDigest(deviceCode) })
    if (!row) return undefined
    const device: DeviceAuthorization = {
      id: row.device_id,
      accountId: row.device_account_id,
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
  async advance(db: Kysely<DB>, device: DeviceAuthorization, to: DeviceStage, changes: { flow_id?: string }, now: number): Promise<boolean> {
    DEVICE_MOVES.assertMove(device.stage, to)
    const result = await forAccount(db, device.accountId)
      .updateTable('device_authorizations')
      .set({ ...changes, stage: to, updated_at: now })
      .where('id', '=', device.id)
      .where('stage', '=', device.stage)
      .executeTakeFirst()
    return result.numUpdatedRows === 1n
  }

  /** RFC 8628 §3.5 slow_down: the device's interval grows by 5 s, once for each poll that came too early. */
  async slowDown(device: DeviceAuthorization, now: number): Promise<void> {
    await forAccount(this.db, device.accountId)
      .updateTable('device_authorizations')
      .set((eb) => ({ interval: eb('interval', '+', SLOW_DOWN_SECONDS), updated_at: now }))
      .where('id', '=', device.id)
      .execute()
  }
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
    clientId: row.client_id,
    scope: scopeList(row.scope),
    stage: row.stage,
    interval: row.interval,
    flowId: row.flow_id,
    expiresAt: row.expires_at,
  }
}
