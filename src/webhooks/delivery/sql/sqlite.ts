import { sql } from 'kysely'
import type { SqlDialect } from '../../../platform/storage/dialects/index.js'
import type { Tx } from '../../../platform/storage/transaction.js'
import { perEndpoint } from '../leases.js'
import type { CompletionSql } from './completion-sql.js'
import { type ClaimSql, LEASED_COLUMNS, type LeaseRequest, type LeasedRow, leaseChanges } from './claim-sql.js'

/**
 * SQLite: one process with one connection, whose transactions run one at a time; there is nothing to lock.
 * Cross-account, as the claim is (see DeliveryQueue).
 */
export class SqliteClaimSql implements ClaimSql {
  constructor(private readonly dialect: SqlDialect) {}

  async lockClaims(): Promise<void> {}

  async lockRateWindows(_tx: Tx, endpointIds: readonly string[]): Promise<ReadonlySet<string>> {
    return new Set(endpointIds)
  }

  async lease(tx: Tx, request: LeaseRequest): Promise<LeasedRow[]> {
    // SQLite: one process with one connection, whose transactions run one at a time: nothing changes in between, and
    // the picked deliveries are still claimable. Found by id alone, they are read through the primary key (asked again
    // whether they are claimable, they were looked up in the due index when the statistics counted few pending rows).
    const rows = await tx.db.selectFrom('webhook_deliveries as d').innerJoin('events as e', 'e.id', 'd.event_id').select(LEASED_COLUMNS).where('d.id', 'in', request.picked).execute()
    if (rows.length === 0) return rows
    const leased = this.dialect.jsonRows({ id: 'text' }, rows.map((row) => ({ id: row.id })))
    await tx.db
      .updateTable('webhook_deliveries')
      .set(leaseChanges(request))
      .where('id', 'in', (eb) => eb.selectFrom(leased.as('l')).select(sql.ref<string>('l.id').as('id')))
      .execute()
    await tx.db
      .insertInto('webhook_leases')
      .values([...perEndpoint(rows)].map(([endpointId, count]) => ({ lease_token: request.leaseToken, holder: request.holder, expires_at: request.leaseEnds, endpoint_id: endpointId, outstanding: count })))
      .execute()
    return rows
  }
}

/** SQLite has no data-modifying CTEs: successes are recorded in a transaction, as every outcome is. */
export class SqliteCompletionSql implements CompletionSql {
  completeSuccesses(): undefined {
    return undefined
  }
}
