import { type Kysely, sql } from 'kysely'
import type { SqlDialect } from '../../../platform/storage/dialects/index.js'
import type { DB, DeliveryStatus } from '../../../platform/storage/schema.js'
import type { Tx } from '../../../platform/storage/transaction.js'
import { applyPlans, type CompletionPlan, countOutcomes, insertAttempts, leaseCounts } from '../completion-statements.js'
import type { EndpointHealth } from '../endpoint-health.js'
import { claimable, releaseLeases } from '../leases.js'
import { type ClaimSql, LEASED_COLUMNS, type LeaseRequest, type LeasedRow, leaseChanges } from './claim-sql.js'
import type { CompletionSql } from './completion-sql.js'

/** Serialises claims across processes (pg_advisory_xact_lock). */
const CLAIM_LOCK = 0x48_45_52_44

/**
 * PostgreSQL: several processes claim at once, so claims are serialised and rows locked as they are taken.
 * Cross-account, as the claim is (see DeliveryQueue).
 */
export class PostgresClaimSql implements ClaimSql {
  async lockClaims(tx: Tx): Promise<void> {
    await sql`select pg_advisory_xact_lock(${CLAIM_LOCK})`.execute(tx.db)
  }

  /** A claim never waits for an endpoint's row, which a completion or a re-queue may hold while waiting for rows of its own. */
  async lockRateWindows(tx: Tx, endpointIds: readonly string[]): Promise<ReadonlySet<string>> {
    const rows = await tx.db.selectFrom('webhook_endpoints').select('id').where('id', 'in', endpointIds).forNoKeyUpdate().skipLocked().execute()
    return new Set(rows.map((row) => row.id))
  }

  /**
   * One statement: the rows are locked (SKIP LOCKED leaves a row another transaction is changing to a later claim),
   * leased, counted, and read back.
   */
  async lease(tx: Tx, request: LeaseRequest): Promise<LeasedRow[]> {
    const { now, leaseToken, holder, leaseEnds } = request
    // Each picked delivery is locked on its own, found by its id alone, in a lateral subquery; the statement
    // leases exactly the rows it answers. Claimability is asked again of the version the lock found: a
    // transaction may have committed a change since `picked` was read (a late completion of a lapsed lease, an
    // endpoint's deletion), and without the check a finished delivery would be leased again. One id at a time,
    // only the primary key is worth using, whatever the statistics, so the check stays outside the subquery
    // (its LIMIT keeps PostgreSQL from pushing the check in): inside, `status = 'pending'` let the planner look
    // each id up in the partial queue or due index instead, reading every queued delivery's entry, whenever
    // the statistics counted few pending rows, as they do of a table that keeps a long history of finished
    // ones. As one scan of all the picked ids, the planner ANDed them with the due index, and as a semi-join it
    // read the whole table.
    const claimed = tx.db
      .selectFrom(request.picked.as('p'))
      .crossJoinLateral((eb) => eb.selectFrom('webhook_deliveries as d').selectAll('d').whereRef('d.id', '=', 'p.id').limit(1).forUpdate().skipLocked().as('d'))
      .innerJoin('events as e', 'e.id', 'd.event_id')
      .where(claimable('d', now))
      .select(LEASED_COLUMNS)
    return tx.db
      .with('claimed', () => claimed)
      .with('leased', (db) => db.updateTable('webhook_deliveries').set(leaseChanges(request)).where('id', 'in', (eb) => eb.selectFrom('claimed').select('claimed.id')))
      .with('counted', (db) =>
        db
          .insertInto('webhook_leases')
          .columns(['lease_token', 'endpoint_id', 'holder', 'outstanding', 'expires_at'])
          .expression((eb) =>
            eb
              .selectFrom('claimed')
              .select((count) => [
                sql<string>`cast(${leaseToken} as text)`.as('lease_token'),
                'claimed.endpoint_id',
                sql<string>`cast(${holder} as text)`.as('holder'),
                count.fn.countAll<number>().as('outstanding'),
                sql<number>`cast(${leaseEnds} as bigint)`.as('expires_at'),
              ])
              .groupBy('claimed.endpoint_id'),
          ),
      )
      .selectFrom('claimed')
      .selectAll()
      .execute()
  }
}

/** PostgreSQL writes related rows in one statement of data-modifying CTEs. */
export class PostgresCompletionSql implements CompletionSql {
  constructor(
    private readonly dialect: SqlDialect,
    private readonly health: EndpointHealth,
  ) {}

  /**
   * One statement, which commits on its own, in place of a transaction's five round trips. Successes record no event
   * and disable no endpoint; they only end their endpoints' runs of failures.
   */
  async completeSuccesses(db: Kysely<DB>, plans: readonly CompletionPlan[], now: number): Promise<Array<{ status: DeliveryStatus }>> {
    const [ended, released] = releaseLeases(sql`lease_counts`, now)
    const outcomes = plans.map((plan) => plan.outcome)
    const kept = sql`a.delivery_id in (select id from applied)`
    // The hour rows are counted after `recovered` has locked the endpoints it changes (reading it makes PostgreSQL run
    // it first): endpoint rows and then hour rows is the order every completion and claim takes them in.
    const afterRecovered = sql`${kept} and (select count(*) from recovered) >= 0`
    const { rows } = await sql<{ id: string }>`
      with applied as (${applyPlans(this.dialect, plans)}),
      attempts as (${insertAttempts(this.dialect, outcomes, kept)}),
      recovered as (${this.health.endFailureRuns(db, sql<string>`(select endpoint_id from applied)`).returning('webhook_endpoints.id')}),
      hours as (${countOutcomes(this.dialect, outcomes, afterRecovered)}),
      lease_counts as ${leaseCounts(this.dialect, plans)},
      ended as (${ended}),
      released as (${released})
      select id from applied`.execute(db)
    return rows.map(() => ({ status: 'succeeded' }))
  }
}
