import type { Kysely } from 'kysely'
import type { Clock } from '../../platform/clock.js'
import type { Outbox } from '../../platform/events/outbox.js'
import { ProblemError } from '../../platform/http/problems.js'
import { newId } from '../../platform/ids.js'
import { decodeCursor, type Page, toPage } from '../../platform/pagination.js'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { DB, EndpointDisabledReason, EndpointStatus, WebhookEndpointsTable } from '../../platform/storage/schema.js'
import { retryingDeadlocks, type Tx, transaction } from '../../platform/storage/transaction.js'
import { type OutboundUrlPolicy, outboundUrlProblem } from '../../platform/outbound/url-policy.js'
import { cancellation } from '../delivery/deliveries.js'
import type { WakeSignal } from '../delivery/wake.js'
import { checkedSecret } from './endpoint-secrets.js'
import { type EndpointStore, refuseManaged } from './endpoint-store.js'
import { type EndpointView, toView } from './endpoint-view.js'
import type { StatusSweeps } from './status-sweeps.js'

export interface EndpointInput {
  url: string
  description?: string
  metadata?: Record<string, string>
  rate_limit?: number | null
  max_in_flight?: number
  secret?: string
}

export type EndpointChanges = Partial<Omit<EndpointInput, 'secret'>> & { status?: EndpointStatus }

export const DEFAULT_MAX_IN_FLIGHT = 20

/**
 * An account's webhook endpoints. Each change is one transaction with its `webhook.endpoint.*` event. Disabling
 * holds the endpoint's waiting deliveries, enabling releases them, deleting cancels them: none is ever dropped. A
 * large backlog changes a batch at a time, the first with the status and the rest in the workers (StatusSweeps).
 */
export class Endpoints {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: SqlDialect,
    private readonly store: EndpointStore,
    private readonly clock: Clock,
    private readonly outbox: Outbox,
    private readonly sweeps: StatusSweeps,
    private readonly wake: WakeSignal,
    private readonly urlPolicy: OutboundUrlPolicy,
  ) {}

  async create(accountId: string, input: EndpointInput): Promise<EndpointView> {
    await this.#checkUrl(input.url)
    const secret = checkedSecret(input.secret)
    return transaction(this.db, (tx) => this.insert(tx, accountId, input, secret, null))
  }

  /**
   * Writes a new endpoint in `tx` with its event; the caller has vetted the URL. `clientId` makes it the endpoint of
   * that client's back-channel logout (see ClientLogoutEndpoints).
   */
  async insert(tx: Tx, accountId: string, input: Omit<EndpointInput, 'secret'>, secret: string, clientId: string | null): Promise<EndpointView> {
    const now = this.clock.now()
    const id = newId('ep', now)
    const row: WebhookEndpointsTable = {
      id,
      account_id: accountId,
      url: input.url,
      description: input.description ?? '',
      status: 'active',
      disabled_reason: null,
      disabled_at: null,
      metadata: JSON.stringify(input.metadata ?? {}),
      rate_limit: input.rate_limit ?? null,
      max_in_flight: input.max_in_flight ?? DEFAULT_MAX_IN_FLIGHT,
      secret: this.store.seal(accountId, id, secret),
      previous_secret: null,
      previous_secret_expires_at: null,
      failing_since: null,
      rate_window_start: 0,
      rate_window_count: 0,
      created_at: now,
      updated_at: now,
      client_id: clientId,
    }
    await forAccount(tx.db, accountId).insertInto('webhook_endpoints', row).execute()
    const view = toView(row)
    await this.outbox.record(tx, accountId, 'webhook.endpoint.created', view, now)
    await this.store.changed(tx, accountId, id)
    return view
  }

  async get(accountId: string, endpointId: string): Promise<EndpointView> {
    return toView(await this.store.existing(this.db, accountId, endpointId))
  }

  async list(accountId: string, limit: number, cursor: string | undefined): Promise<Page<EndpointView>> {
    const after = decodeCursor(cursor)
    let query = forAccount(this.db, accountId).listFrom('webhook_endpoints', 'asc').selectAll().limit(limit + 1)
    if (after !== undefined) query = query.where('id', '>', after)
    const rows = await query.execute()
    return toPage(rows, limit, (row) => row.id, toView)
  }

  async update(accountId: string, endpointId: string, changes: EndpointChanges): Promise<EndpointView> {
    if (changes.url !== undefined) await this.#checkUrl(changes.url)
    return transaction(this.db, async (tx) => {
      // Locked: whether this enables or disables the endpoint depends on the status read.
      const row = await this.store.existing(tx.db, accountId, endpointId, true)
      if (changes.url !== undefined && changes.url !== row.url) refuseManaged(row, 'its URL is the client\'s backchannel_logout_uri; change that instead')
      const now = this.clock.now()
      const { status, metadata, ...fields } = changes
      const changed = { ...fields, ...(metadata !== undefined && { metadata: JSON.stringify(metadata) }), updated_at: now }
      const next: WebhookEndpointsTable = { ...row, ...changed }
      // Only the changed columns: writing back the whole row read above would undo what a concurrent
      // transaction did since (a secret rotation, a worker disabling the endpoint) on PostgreSQL.
      await forAccount(tx.db, accountId).updateTable('webhook_endpoints').set(changed).where('id', '=', endpointId).execute()
      if (Object.keys(fields).length > 0 || metadata !== undefined) {
        await this.outbox.record(tx, accountId, 'webhook.endpoint.updated', toView(next), now)
      }
      // Disabling and enabling report the change to the caches themselves.
      if (status === 'disabled' && row.status === 'active') return toView(await this.#disable(tx, next, 'manual', now))
      if (status === 'active' && row.status === 'disabled') return toView(await this.#enable(tx, next, now))
      await this.store.changed(tx, accountId, endpointId)
      return toView(next)
    })
  }

  /**
   * Deletes the endpoint and its subscriptions; its deliveries that had not finished become `cancelled`, in two
   * passes around the endpoint row's deletion. A retry or a recovery job that read the endpoint holds a share lock
   * on its row (see endpointStatusForWrites), so deleting the row waits for it to commit, and the second pass,
   * with a fresh snapshot, cancels everything unfinished, what it queued included (beyond a batch, in the workers'
   * sweep, which nothing can add to once the row is gone). The first pass takes only the deliveries in flight,
   * before the row is locked: their completions lock the delivery and then the endpoint (to end its run of
   * failures), and the second pass would otherwise wait for them while holding the endpoint. Retries and recoveries
   * touch no delivery in flight, so they never wait for the first pass. A delivery leased between the passes and
   * completing as the second one comes can still deadlock with it; PostgreSQL then aborts one of the two, and
   * either is run again (the worker's write and its sweep batch too).
   */
  async delete(accountId: string, endpointId: string): Promise<void> {
    await retryingDeadlocks(() => this.#delete(accountId, endpointId))
  }

  async #delete(accountId: string, endpointId: string): Promise<void> {
    await transaction(this.db, async (tx) => {
      const row = await this.store.existing(tx.db, accountId, endpointId)
      refuseManaged(row, "it goes with the client's backchannel_logout_uri; remove that, or delete the client")
      await this.remove(tx, row)
    })
  }

  /** Deletes an endpoint `tx` has read, cancelling what it had not delivered (see delete). */
  async remove(tx: Tx, row: WebhookEndpointsTable): Promise<void> {
    const { account_id: accountId, id: endpointId } = row
    const now = this.clock.now()
    const account = forAccount(tx.db, accountId)
    await account.updateTable('webhook_deliveries').set(cancellation(now)).where('endpoint_id', '=', endpointId).where('status', '=', 'pending').where('lease_token', 'is not', null).execute()
    await account.deleteFrom('webhook_endpoints').where('id', '=', endpointId).execute()
    await account.deleteFrom('webhook_endpoint_hours').where('endpoint_id', '=', endpointId).execute()
    await this.sweeps.start(tx, accountId, endpointId, 'cancel', now)
    await this.outbox.record(tx, accountId, 'webhook.endpoint.deleted', { id: row.id, url: row.url }, now)
    await this.store.changed(tx, accountId, endpointId)
  }

  /** Points a client's logout endpoint, which `tx` has read, at the client's new URI. */
  async moveTo(tx: Tx, row: WebhookEndpointsTable, url: string): Promise<void> {
    const now = this.clock.now()
    await forAccount(tx.db, row.account_id).updateTable('webhook_endpoints').set({ url, updated_at: now }).where('id', '=', row.id).execute()
    await this.outbox.record(tx, row.account_id, 'webhook.endpoint.updated', toView({ ...row, url, updated_at: now }), now)
    await this.store.changed(tx, row.account_id, row.id)
  }

  /**
   * Disables an endpoint for a worker, when it failed too long or answered 410: its waiting deliveries become
   * `held`, and so will the deliveries of new events, until it is enabled again. The worker has read the row with
   * no lock of the kind a status change takes.
   */
  async disable(tx: Tx, row: WebhookEndpointsTable, reason: EndpointDisabledReason, now: number): Promise<WebhookEndpointsTable> {
    await this.#lockForStatusChange(tx, row)
    return this.#disable(tx, row, reason, now)
  }

  /** Disables an endpoint whose row `tx` holds FOR UPDATE (see #lockForStatusChange). */
  async #disable(tx: Tx, row: WebhookEndpointsTable, reason: EndpointDisabledReason, now: number): Promise<WebhookEndpointsTable> {
    const changes = { status: 'disabled', disabled_reason: reason, disabled_at: now, updated_at: now } as const
    const next: WebhookEndpointsTable = { ...row, ...changes }
    await forAccount(tx.db, row.account_id).updateTable('webhook_endpoints').set(changes).where('id', '=', row.id).execute()
    await this.sweeps.start(tx, row.account_id, row.id, 'hold', now)
    await this.outbox.record(tx, row.account_id, 'webhook.endpoint.disabled', toView(next), now)
    await this.store.changed(tx, row.account_id, row.id)
    return next
  }

  async #enable(tx: Tx, row: WebhookEndpointsTable, now: number): Promise<WebhookEndpointsTable> {
    const changes = { status: 'active', disabled_reason: null, disabled_at: null, failing_since: null, updated_at: now } as const
    const next: WebhookEndpointsTable = { ...row, ...changes }
    // No lock to take: update(), the only caller, read the row FOR UPDATE.
    await forAccount(tx.db, row.account_id).updateTable('webhook_endpoints').set(changes).where('id', '=', row.id).execute()
    await this.sweeps.start(tx, row.account_id, row.id, 'release', now)
    await this.outbox.record(tx, row.account_id, 'webhook.endpoint.enabled', toView(next), now)
    await this.store.changed(tx, row.account_id, row.id)
    // Even with nothing held: pending deliveries that a hold had not reached yet are due again too.
    await this.wake.send(tx, 'deliveries')
    return next
  }

  /**
   * A change of status holds the endpoint's row FOR UPDATE, the one lock that conflicts with FOR KEY SHARE, which
   * whatever writes deliveries as the status says takes (publishing, fan-out, retries, recovery jobs and the
   * batches of status sweeps): either waits for the other, so deliveries made meanwhile are held, released or
   * cancelled with the rest. An UPDATE alone would take FOR NO KEY UPDATE, which doesn't. (Deleting the row
   * conflicts with FOR KEY SHARE by itself.)
   */
  async #lockForStatusChange(tx: Tx, row: WebhookEndpointsTable): Promise<void> {
    await this.dialect.lockForUpdate(forAccount(tx.db, row.account_id).selectFrom('webhook_endpoints').select('id').where('id', '=', row.id))
  }

  async #checkUrl(url: string): Promise<void> {
    const problem = await outboundUrlProblem(url, this.urlPolicy)
    if (problem) throw new ProblemError('validation_failed', `url ${problem}`, [{ pointer: '/body/url', message: problem }])
  }
}
