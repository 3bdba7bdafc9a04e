import { sql } from 'kysely'
import type { DialectFeatures } from '../platform/storage/database.js'
import type { WebhookJobsTable, WebhookSweepsTable } from '../platform/storage/schema.js'
import type { Tx } from '../platform/storage/transaction.js'

/**
 * Cross-account: the workers' picks of their next piece of background work, whichever account it belongs to. What a
 * worker then does with the piece stays within the piece's account (see StatusSweeps and RecoveryJobs). On
 * PostgreSQL a picked row stays locked until `tx` ends, and rows other workers hold are passed over.
 */
export async function pickSweep(tx: Tx, features: DialectFeatures): Promise<WebhookSweepsTable | undefined> {
  let query = tx.db.selectFrom('webhook_sweeps').selectAll().orderBy('id').limit(1)
  if (features.rowLocks) query = query.forUpdate().skipLocked()
  return query.executeTakeFirst()
}

/** The oldest unfinished recovery job (see pickSweep). */
export async function pickRecoveryJob(tx: Tx, features: DialectFeatures): Promise<WebhookJobsTable | undefined> {
  let query = tx.db.selectFrom('webhook_jobs').selectAll().where('status', '=', 'pending').orderBy('created_at').limit(1)
  if (features.rowLocks) query = query.modifyEnd(sql`for update skip locked`)
  return query.executeTakeFirst()
}
