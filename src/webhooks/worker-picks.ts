import type { SqlDialect } from '../platform/storage/dialects/index.js'
import type { WebhookJobsTable, WebhookSweepsTable } from '../platform/storage/schema.js'
import type { Tx } from '../platform/storage/transaction.js'

/**
 * Cross-account: the workers' picks of their next piece of background work, whichever account it belongs to. What a
 * worker then does with the piece stays within the piece's account (see StatusSweeps and RecoveryJobs). On
 * PostgreSQL a picked row stays locked until `tx` ends, and rows other workers hold are passed over.
 */
export async function pickSweep(tx: Tx, dialect: SqlDialect): Promise<WebhookSweepsTable | undefined> {
  const oldest = tx.db.selectFrom('webhook_sweeps').selectAll().orderBy('id').limit(1)
  return dialect.forUpdate(oldest, { skipLocked: true }).executeTakeFirst()
}

/** The oldest unfinished recovery job (see pickSweep). */
export async function pickRecoveryJob(tx: Tx, dialect: SqlDialect): Promise<WebhookJobsTable | undefined> {
  const pending = tx.db.selectFrom('webhook_jobs').selectAll().where('status', '=', 'pending').orderBy('created_at').limit(1)
  return dialect.forUpdate(pending, { skipLocked: true }).executeTakeFirst()
}
