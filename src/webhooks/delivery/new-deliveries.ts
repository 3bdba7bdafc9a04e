import { type RawBuilder, sql } from 'kysely'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import type { DeliveryStatus, WebhookDeliveriesTable } from '../../platform/storage/schema.js'

/** A delivery to create. Whether it waits (`held`) or is due at once (`pending`) is settled as it is written. */
export type NewDelivery = Pick<WebhookDeliveriesTable, 'id' | 'account_id' | 'event_id' | 'event_type' | 'endpoint_id' | 'created_at'>

/**
 * The INSERT of `deliveries` (those whose row, aliased `d`, meets `condition`), each `pending` and due at once if
 * its endpoint is active as it is written, `held` if it is disabled, and left out if the endpoint was deleted. Which
 * endpoints an event goes to comes from a cache that can be moments behind another process's change; the endpoint's
 * row cannot. On PostgreSQL the rows are read FOR KEY SHARE: an enable, disable or delete changing one right now
 * (each holds the row FOR UPDATE) is waited for and its outcome read, and one that comes later waits for this insert
 * to commit, so its release, hold or cancellation finds these deliveries too. Claims and completions, which lock
 * endpoints FOR NO KEY UPDATE, neither wait for this nor make it wait. Answers the status of each delivery written.
 */
export function insertDeliveries(dialect: SqlDialect, deliveries: readonly NewDelivery[], condition: RawBuilder<unknown> = sql`true`): RawBuilder<{ status: DeliveryStatus }> {
  const rows = dialect.jsonRows({ id: 'text', account_id: 'text', event_id: 'text', event_type: 'text', endpoint_id: 'text', created_at: 'bigint' }, deliveries)
  return sql`
    insert into webhook_deliveries (id, account_id, event_id, event_type, endpoint_id, status, attempt_count, next_attempt_at, created_at)
    select d.id, d.account_id, d.event_id, d.event_type, d.endpoint_id,
      case when e.status = 'active' then 'pending' else 'held' end, 0,
      case when e.status = 'active' then d.created_at end, d.created_at
    from ${rows} as d
    inner join ${dialect.endpointsForKeyShare(deliveries.map((delivery) => ({ account_id: delivery.account_id, id: delivery.endpoint_id })))} as e on e.account_id = d.account_id and e.id = d.endpoint_id
    where ${condition}
    returning status`
}

