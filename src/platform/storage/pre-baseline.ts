import type { Kysely } from 'kysely'
import { BASELINE, MIGRATION_TABLE } from './migrations/index.js'
import type { DB } from './schema.js'

/**
 * The migrations of development builds before the first release, which `0001-baseline` replaced; their result is the
 * baseline's schema. A test keeps a frozen copy of them (test/fixtures/pre-baseline-migrations).
 */
export const PRE_BASELINE_MIGRATIONS: readonly string[] = [
  '0001-platform',
  '0002-webhooks',
  '0003-delivery-leases',
  '0004-retention-by-account',
  '0005-held-deliveries',
  '0006-listing-indexes',
  '0007-bytewise-keys',
  '0008-status-sweeps',
  '0009-lease-room',
  '0010-attempts-without-check',
  '0011-lease-fit',
  '0012-claim-only-queue',
  '0013-cache-changes',
]

/** A row of Kysely's table of the migrations that have run. */
interface MigrationsTable {
  name: string
  timestamp: string
}

/**
 * Records a database that ran every pre-baseline migration as at the baseline, in one transaction, and refuses one
 * that ran only some of them: its schema is neither the baseline's nor empty, and no migration leads on from it.
 * Returns whether the database was recorded anew. Safe beside other processes doing the same: on PostgreSQL a second
 * delete waits for the first to commit and then finds nothing to delete.
 */
export async function adoptPreBaselineDatabase(db: Kysely<DB>): Promise<boolean> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true })
  if (!tables.some((table) => table.name === MIGRATION_TABLE)) return false
  return db
    .withTables<{ [MIGRATION_TABLE]: MigrationsTable }>()
    .transaction()
    .execute(async (trx) => {
      const removed = await trx.deleteFrom(MIGRATION_TABLE).where('name', 'in', PRE_BASELINE_MIGRATIONS).returning('name').execute()
      if (removed.length === 0) return false
      if (removed.length < PRE_BASELINE_MIGRATIONS.length) {
        const ran = new Set(removed.map((row) => row.name))
        const missing = PRE_BASELINE_MIGRATIONS.filter((name) => !ran.has(name))
        throw new Error(
          `This database was migrated by a development build of Herald that predates the ${BASELINE} migration, and lacks ` +
            `${missing.join(', ')}. Migrate it with a development build that has them all (up to ` +
            `${PRE_BASELINE_MIGRATIONS.at(-1)}) first, or start from a new database.`,
        )
      }
      await trx.insertInto(MIGRATION_TABLE).values({ name: BASELINE, timestamp: new Date().toISOString() }).execute()
      return true
    })
}
