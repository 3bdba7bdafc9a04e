import type { Kysely, Updateable } from 'kysely'
import type { Clock } from '../../platform/clock.js'
import { newId } from '../../platform/ids.js'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { DB, EndpointStatus, SweepKind, WebhookDeliveriesTable, WebhookSweepsTable } from '../../platform/storage/schema.js'
import { type Tx, transaction } from '../../platform/storage/transaction.js'
import { cancellation, endpointDeliveriesIn, HOLDING } from '../delivery/deliveries.js'
import { endpointStatusForWrites } from '../delivery/requeue.js'
import type { WakeSignal } from '../delivery/wake.js'
import { pickSweep } from '../worker-picks.js'

interface SweepRule {
  /** The endpoint's status the sweep belongs to (undefined: the endpoint is gone); once it has another, it ends. */
  endpointStatus: EndpointStatus | undefined
  /** The statuses it changes, each swept on its own (see endpointDeliveriesIn). */
  from: ReadonlyArray<WebhookSweepsTable['from_status']>
  /** Deliveries a worker holds right now are left alone: each completes first, and sees the endpoint's status. */
  skipsLeased: boolean
  changes(now: number): Updateable<WebhookDeliveriesTable>
}

const RULES: Record<SweepKind, SweepRule> = {
  release: { endpointStatus: 'active', from: ['held'], skipsLeased: false, changes: (now) => ({ status: 'pending', next_attempt_at: now }) },
  hold: { endpointStatus: 'disabled', from: ['pending'], skipsLeased: true, changes: () => HOLDING },
  cancel: { endpointStatus: undefined, from: ['pending', 'held'], skipsLeased: false, changes: cancellation },
}

type Sweep = Omit<WebhookSweepsTable, 'id'>

/**
 * What a change of an endpoint's status does to its waiting deliveries, done in batches: enabling releases the held
 * ones, disabling holds the pending ones, deleting cancels both. The change itself does the first batch in its own
 * transaction, so a small backlog has followed it by the time the request answers; what remains is recorded in
 * `webhook_sweeps`, and workers carry on one batch per round, claims in between. Done in one statement, a backlog of
 * a million kept the request, and the publishes to the endpoint that wait for its row, busy for half a minute.
 *
 * A sweep goes through the deliveries in id order from where its last batch stopped, so a batch reads what it
 * changes and never again what earlier batches changed. Each batch reads the endpoint's status as a retry does
 * (endpointStatusForWrites), and a sweep whose endpoint has changed status since ends: the change that came after
 * started a sweep of its own. Two sweeps of one kind may run side by side (enabled, disabled and enabled again
 * before the first was done); each goes its own way, and the later one covers every delivery.
 */
export class StatusSweeps {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: SqlDialect,
    private readonly clock: Clock,
    private readonly wake: WakeSignal,
    private readonly batch: number,
  ) {}

  /** The first batch, in `tx`, the status change's transaction, which holds the endpoint's row or deleted it. */
  async start(tx: Tx, accountId: string, endpointId: string, kind: SweepKind, now: number): Promise<void> {
    let recorded = false
    for (const from of RULES[kind].from) {
      const sweep: Sweep = { account_id: accountId, endpoint_id: endpointId, kind, from_status: from, position: null }
      const position = await this.#changeBatch(tx, sweep, now)
      if (position === undefined) continue
      // A new row each time, even beside an unfinished sweep of the same kind: its worker may hold that one locked.
      await forAccount(tx.db, accountId).insertInto('webhook_sweeps', { ...sweep, id: newId('swp', now), position }).execute()
      recorded = true
    }
    if (recorded) await this.wake.send(tx, 'jobs')
  }

  /** One batch of the oldest sweep; answers false when there was none to work on. */
  async runBatch(): Promise<boolean> {
    return transaction(this.db, async (tx) => {
      const sweep = await pickSweep(tx, this.dialect)
      if (!sweep) return false
      const endpointStatus = await endpointStatusForWrites(tx, this.dialect, sweep.account_id, sweep.endpoint_id)
      const position = endpointStatus === RULES[sweep.kind].endpointStatus ? await this.#changeBatch(tx, sweep, this.clock.now()) : undefined
      const account = forAccount(tx.db, sweep.account_id)
      if (position === undefined) await account.deleteFrom('webhook_sweeps').where('id', '=', sweep.id).execute()
      else await account.updateTable('webhook_sweeps').set({ position }).where('id', '=', sweep.id).execute()
      return true
    })
  }

  /**
   * Changes the next batch of the sweep's deliveries; answers the id of the last one, or undefined when the batch was
   * the last (it was not full). A delivery changed meanwhile by someone else (leased, or finished by a completion) is
   * left as it is now.
   */
  async #changeBatch(tx: Tx, sweep: Sweep, now: number): Promise<string | undefined> {
    const { changes, skipsLeased } = RULES[sweep.kind]
    let query = endpointDeliveriesIn(tx.db, sweep.account_id, sweep.endpoint_id, sweep.from_status).limit(this.batch)
    if (sweep.position !== null) query = query.where('id', '>', sweep.position)
    if (skipsLeased) query = query.where('lease_token', 'is', null)
    const ids = (await query.execute()).map((row) => row.id)
    if (ids.length > 0) {
      let update = forAccount(tx.db, sweep.account_id).updateTable('webhook_deliveries').set(changes(now)).where('id', 'in', ids).where('status', '=', sweep.from_status)
      if (skipsLeased) update = update.where('lease_token', 'is', null)
      const changed = Number((await update.executeTakeFirst()).numUpdatedRows)
      if (sweep.kind === 'release' && changed > 0) await this.wake.send(tx, 'deliveries')
    }
    return ids.length === this.batch ? ids.at(-1) : undefined
  }
}
