import type { Kysely } from 'kysely'
import { type Clock, toRfc3339 } from '../../platform/clock.js'
import { notFound } from '../../platform/http/problems.js'
import { newId } from '../../platform/ids.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import type { DB, EventsTable } from '../../platform/storage/schema.js'
import { transaction } from '../../platform/storage/transaction.js'
import { type EndpointStore, refuseManaged } from '../endpoints/endpoint-store.js'
import { testEventData } from '../events/event-types.js'
import { type DeliveryView, toView } from './deliveries.js'
import { insertDeliveries } from './new-deliveries.js'
import type { WakeSignal } from './wake.js'

/**
 * Test deliveries (Svix's "send example"): a `webhook.test` event made for one endpoint and delivered to it alone,
 * whatever it subscribes to. The event is written already fanned out, so no subscription ever gets it; its one
 * delivery is written with it, in the same transaction, and from there is like any other: claimed by a worker,
 * signed, retried on the account's schedule, recorded, and `held` while the endpoint is disabled.
 */
export class TestDeliveries {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: SqlDialect,
    private readonly endpoints: EndpointStore,
    private readonly wake: WakeSignal,
    private readonly clock: Clock,
  ) {}

  async send(accountId: string, endpointId: string): Promise<DeliveryView> {
    return transaction(this.db, async (tx) => {
      const endpoint = await this.endpoints.existing(tx.db, accountId, endpointId)
      refuseManaged(endpoint, 'it receives logout tokens, which only an ended session makes')
      const now = this.clock.now()
      const event: EventsTable = {
        id: newId('evt', now),
        account_id: accountId,
        type: 'webhook.test',
        data: JSON.stringify(testEventData(endpointId, toRfc3339(now))),
        created_at: now,
        fanned_out_at: now,
        idempotency_key: null,
      }
      await forAccount(tx.db, accountId).insertInto('events', event).execute()
      const deliveryId = newId('dlv', now)
      const { rows } = await insertDeliveries(this.dialect, [{ id: deliveryId, account_id: accountId, event_id: event.id, event_type: event.type, endpoint_id: endpointId, created_at: now }]).execute(tx.db)
      // Held deliveries wait for their endpoint; only a pending one is work for a worker.
      if (rows.some((row) => row.status === 'pending')) await this.wake.send(tx, 'deliveries')
      const delivery = await forAccount(tx.db, accountId).selectFrom('webhook_deliveries').selectAll().where('id', '=', deliveryId).executeTakeFirst()
      // None written: the endpoint was deleted since it was read (insertDeliveries leaves deleted endpoints out).
      if (!delivery) throw notFound(`Endpoint ${endpointId}`)
      return toView(delivery)
    })
  }
}
