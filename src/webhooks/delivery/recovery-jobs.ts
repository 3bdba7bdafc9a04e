import type { Kysely } from 'kysely'
import { type Clock, optionalRfc3339, toRfc3339 } from '../../platform/clock.js'
import { notFound } from '../../platform/http/problems.js'
import { idBoundary, looksLikeId, newId } from '../../platform/ids.js'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { DB, WebhookJobsTable } from '../../platform/storage/schema.js'
import { transaction } from '../../platform/storage/transaction.js'
import { endpointDeliveriesIn } from './deliveries.js'
import { endpointStatusForWrites, requeue } from './requeue.js'
import { pickRecoveryJob } from '../worker-picks.js'
import type { WakeSignal } from './wake.js'

export interface JobView {
  id: string
  kind: 'recover'
  endpoint_id: string
  since: string
  status: 'pending' | 'done'
  requeued: number
  created_at: string
  finished_at: string | null
}

/**
 * Recovering an endpoint: its failed deliveries created since a given time are queued again. The request only
 * records the job; workers carry it out in bounded batches, each one transaction that also records how far it
 * got, so a restart carries on where it stopped and a large recovery never holds the database for long. A worker
 * claims deliveries between one batch and the next.
 */
export class RecoveryJobs {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: SqlDialect,
    private readonly clock: Clock,
    private readonly wake: WakeSignal,
  ) {}

  async create(accountId: string, endpointId: string, since: number): Promise<JobView> {
    return transaction(this.db, async (tx) => {
      const account = forAccount(tx.db, accountId)
      const endpoint = looksLikeId('ep', endpointId) ? await account.selectFrom('webhook_endpoints').select('id').where('id', '=', endpointId).executeTakeFirst() : undefined
      if (!endpoint) throw notFound(`Endpoint ${endpointId}`)
      const now = this.clock.now()
      const row: WebhookJobsTable = { id: newId('job', now), account_id: accountId, kind: 'recover', endpoint_id: endpointId, since, status: 'pending', position: null, requeued: 0, created_at: now, finished_at: null }
      await account.insertInto('webhook_jobs', row).execute()
      await this.wake.send(tx, 'jobs')
      return toView(row)
    })
  }

  async get(accountId: string, jobId: string): Promise<JobView> {
    const row = looksLikeId('job', jobId)
      ? await forAccount(this.db, accountId).selectFrom('webhook_jobs').selectAll().where('id', '=', jobId).executeTakeFirst()
      : undefined
    if (!row) throw notFound(`Job ${jobId}`)
    return toView(row)
  }

  /** One batch of the oldest unfinished job; answers false when there was none to work on. */
  async runBatch(batch: number): Promise<boolean> {
    return transaction(this.db, async (tx) => {
      const job = await pickRecoveryJob(tx, this.dialect)
      if (!job) return false
      const now = this.clock.now()
      const endpointStatus = await endpointStatusForWrites(tx, this.dialect, job.account_id, job.endpoint_id)
      let failed: string[] = []
      if (endpointStatus !== undefined) {
        const from = job.position ?? idBoundary('dlv', job.since)
        const rows = await endpointDeliveriesIn(tx.db, job.account_id, job.endpoint_id, 'failed')
          .where('id', job.position === null ? '>=' : '>', from)
          .limit(batch)
          .execute()
        failed = rows.map((row) => row.id)
      }
      const { requeued } = await requeue(tx, this.wake, job.account_id, failed, 'failed', endpointStatus === 'active', now)
      const done = failed.length < batch
      await forAccount(tx.db, job.account_id)
        .updateTable('webhook_jobs')
        .set({ position: failed.at(-1) ?? job.position, requeued: job.requeued + requeued, status: done ? 'done' : 'pending', finished_at: done ? now : null })
        .where('id', '=', job.id)
        .execute()
      return true
    })
  }
}

function toView(row: WebhookJobsTable): JobView {
  return {
    id: row.id,
    kind: row.kind,
    endpoint_id: row.endpoint_id,
    since: toRfc3339(row.since),
    status: row.status,
    requeued: row.requeued,
    created_at: toRfc3339(row.created_at),
    finished_at: optionalRfc3339(row.finished_at),
  }
}
