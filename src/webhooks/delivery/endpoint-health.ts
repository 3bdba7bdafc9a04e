import type { Kysely, RawBuilder } from 'kysely'
import type { SettingsStore } from '../../platform/settings/settings.js'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import type { DB, EndpointDisabledReason, WebhookEndpointsTable } from '../../platform/storage/schema.js'
import type { Tx } from '../../platform/storage/transaction.js'
import type { Endpoints } from '../endpoints/endpoints.js'

/** One recorded attempt, as endpoint health reads it. */
export interface AttemptResult {
  endpointId: string
  succeeded: boolean
  responseStatus: number | null
}

/** What a batch of attempts says of their endpoints. */
export interface HealthReport {
  /** Endpoints with a success in the batch: their runs of failures end. */
  succeeded: ReadonlySet<string>
  /** Endpoints with failures and no success in the batch: a run of failures starts or goes on. */
  failing: ReadonlySet<string>
  /** Endpoints that answered 410 Gone. */
  gone: ReadonlySet<string>
}

export function healthReport(results: readonly AttemptResult[]): HealthReport {
  const succeeded = new Set(results.filter((result) => result.succeeded).map((result) => result.endpointId))
  const failing = new Set(results.filter((result) => !result.succeeded && !succeeded.has(result.endpointId)).map((result) => result.endpointId))
  const gone = new Set(results.filter((result) => result.responseStatus === 410).map((result) => result.endpointId))
  return { succeeded, failing, gone }
}

/** An endpoint that a batch of attempts disabled. */
export interface DisabledEndpoint {
  accountId: string
  endpointId: string
  reason: EndpointDisabledReason
}

/**
 * Why a failing endpoint is to be disabled now, if it is: at once when it answered 410 Gone, or once it has failed
 * without a single success for the account's `webhook_disable_after` seconds.
 */
export function disableReason(failingSince: number | null, gone: boolean, disableAfterSeconds: number | undefined, now: number): EndpointDisabledReason | null {
  if (gone) return 'gone'
  const limitMs = (disableAfterSeconds ?? Number.POSITIVE_INFINITY) * 1000
  return failingSince !== null && now - failingSince >= limitMs ? 'failing' : null
}

/**
 * Endpoint health as the completion of attempts writes it: runs of failures, and disabling an endpoint for them.
 * Cross-account: a batch of completions names its endpoints by id, whatever their accounts.
 */
export class EndpointHealth {
  constructor(
    private readonly dialect: SqlDialect,
    private readonly settings: SettingsStore,
    private readonly endpoints: Endpoints,
  ) {}

  /** A success ends its endpoint's run of failures. Several endpoints are locked in the order of their ids. */
  endFailureRuns(db: Kysely<DB>, endpointIds: readonly string[] | RawBuilder<string>) {
    const failing = db.selectFrom('webhook_endpoints').select('id').where('id', 'in', endpointIds).where('failing_since', 'is not', null).orderBy('id')
    return db.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', 'in', this.dialect.forNoKeyUpdate(failing))
  }

  /** Records what `results` say of their endpoints (see healthReport and disableReason); answers those it disabled. */
  async record(tx: Tx, results: readonly AttemptResult[], now: number): Promise<DisabledEndpoint[]> {
    const { succeeded, failing, gone } = healthReport(results)
    if (succeeded.size > 0) await this.endFailureRuns(tx.db, [...succeeded]).execute()
    if (failing.size === 0) return []
    await tx.db.updateTable('webhook_endpoints').set({ failing_since: now }).where('id', 'in', [...failing]).where('failing_since', 'is', null).execute()
    // In the order of their ids, in which a disable's FOR UPDATE is taken on each (see insertDeliveries).
    const rows: WebhookEndpointsTable[] = await tx.db.selectFrom('webhook_endpoints').selectAll().where('id', 'in', [...failing]).where('status', '=', 'active').orderBy('id').execute()
    const disabled: DisabledEndpoint[] = []
    for (const row of rows) {
      // Read in the transaction: on SQLite it holds the only connection, which a cache miss would wait for.
      const settings = await this.settings.read(tx.db, row.account_id)
      const reason = disableReason(row.failing_since, gone.has(row.id), settings?.webhook_disable_after, now)
      if (!reason) continue
      await this.endpoints.disable(tx, row, reason, now)
      disabled.push({ accountId: row.account_id, endpointId: row.id, reason })
    }
    return disabled
  }
}
