import type { Kysely } from 'kysely'
import { type Clock, toRfc3339 } from '../../platform/clock.js'
import { ProblemError, notFound } from '../../platform/http/problems.js'
import { looksLikeId, newId } from '../../platform/ids.js'
import { decodeCursor, type Page, toPage } from '../../platform/pagination.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { DB, WebhookSubscriptionsTable } from '../../platform/storage/schema.js'
import { transaction } from '../../platform/storage/transaction.js'
import { type EndpointStore, refuseManaged } from '../endpoints/endpoint-store.js'
import { isValidPattern } from '../events/event-types.js'

export interface SubscriptionView {
  id: string
  endpoint_id: string
  event_types: string[]
  created_at: string
}

/** Links between an account's endpoints and the event types they receive. */
export class Subscriptions {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly endpoints: EndpointStore,
    private readonly clock: Clock,
  ) {}

  async create(accountId: string, endpointId: string, eventTypes: readonly string[]): Promise<SubscriptionView> {
    const bad = eventTypes.findIndex((pattern) => !isValidPattern(pattern))
    if (bad >= 0) {
      throw new ProblemError('validation_failed', `event_types/${bad} is not an event type, a prefix.* pattern or *`, [
        { pointer: `/body/event_types/${bad}`, message: 'must be an event type such as invoice.paid, a pattern such as invoice.*, or *' },
      ])
    }
    return transaction(this.db, async (tx) => {
      // Another account's endpoint is as absent as one that never existed.
      const endpoint = await this.endpoints.existing(tx.db, accountId, endpointId)
      refuseManaged(endpoint, 'it receives logout tokens, not subscribed events')
      const now = this.clock.now()
      const row: WebhookSubscriptionsTable = { id: newId('sub', now), account_id: accountId, endpoint_id: endpointId, event_types: JSON.stringify([...new Set(eventTypes)]), created_at: now }
      await forAccount(tx.db, accountId).insertInto('webhook_subscriptions', row).execute()
      await this.endpoints.changed(tx, accountId, endpointId)
      return toView(row)
    })
  }

  async get(accountId: string, subscriptionId: string): Promise<SubscriptionView> {
    return toView(await this.#existing(this.db, accountId, subscriptionId))
  }

  async list(accountId: string, limit: number, cursor: string | undefined, endpointId: string | undefined): Promise<Page<SubscriptionView>> {
    const after = decodeCursor(cursor)
    let query = forAccount(this.db, accountId).listFrom('webhook_subscriptions', 'asc').selectAll().limit(limit + 1)
    if (after !== undefined) query = query.where('id', '>', after)
    if (endpointId !== undefined) query = query.where('endpoint_id', '=', endpointId)
    const rows = await query.execute()
    return toPage(rows, limit, (row) => row.id, toView)
  }

  async delete(accountId: string, subscriptionId: string): Promise<void> {
    await transaction(this.db, async (tx) => {
      const row = await this.#existing(tx.db, accountId, subscriptionId)
      await forAccount(tx.db, accountId).deleteFrom('webhook_subscriptions').where('id', '=', row.id).execute()
      await this.endpoints.changed(tx, accountId, row.endpoint_id)
    })
  }

  async #existing(db: Kysely<DB>, accountId: string, subscriptionId: string): Promise<WebhookSubscriptionsTable> {
    const row = looksLikeId('sub', subscriptionId)
      ? await forAccount(db, accountId).selectFrom('webhook_subscriptions').selectAll().where('id', '=', subscriptionId).executeTakeFirst()
      : undefined
    if (!row) throw notFound(`Subscription ${subscriptionId}`)
    return row
  }
}

function toView(row: WebhookSubscriptionsTable): SubscriptionView {
  return { id: row.id, endpoint_id: row.endpoint_id, event_types: JSON.parse(row.event_types) as string[], created_at: toRfc3339(row.created_at) }
}
