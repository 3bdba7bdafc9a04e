import { Migrator } from 'kysely'
import type { Database } from './database.js'
import { MIGRATION_TABLE, migrationsFor } from './migrations/index.js'
import { adoptPreBaselineDatabase } from './pre-baseline.js'

export interface MigrationOutcome {
  applied: string[]
  /** A development database, migrated before the baseline existed, is now recorded as at the baseline. */
  adoptedPreBaseline: boolean
}

/**
 * Brings the schema up to date. Kysely's migrator takes a lock first (an advisory lock on PostgreSQL; on SQLite, one
 * on a file beside the database: see sqlite-driver.ts), so several processes starting at once apply each migration
 * exactly once.
 */
export async function migrateToLatest({ db, dialect }: Pick<Database, 'db' | 'dialect'>): Promise<MigrationOutcome> {
  const adoptedPreBaseline = await adoptPreBaselineDatabase(db)
  const migrations = migrationsFor(dialect.name)
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: 'herald_migrations_lock',
  })
  const { error, results = [] } = await migrator.migrateToLatest()
  if (error) {
    const failed = results.find((result) => result.status === 'Error')
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${String(error)}`, { cause: error })
  }
  return { applied: results.filter((result) => result.status === 'Success').map((result) => result.migrationName), adoptedPreBaseline }
}
