import type { Kysely } from 'kysely'
import type { DB, DeliveryStatus } from '../../../platform/storage/schema.js'
import type { CompletionPlan } from '../completion-statements.js'

/** The SQL of completing attempts that differs between the dialects; one implementation each, chosen in ./index.ts. */
export interface CompletionSql {
  /**
   * Records a batch of successes, the common case, in one statement that commits on its own, where the dialect can
   * write related rows in one statement. Answers undefined where it can't: the caller's transaction records them as
   * it records every outcome.
   */
  completeSuccesses(db: Kysely<DB>, plans: readonly CompletionPlan[], now: number): Promise<Array<{ status: DeliveryStatus }>> | undefined
}
