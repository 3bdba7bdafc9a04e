import { Migrator } from 'kysely'
import type { Kysely } from 'kysely'
import { migrations } from './migrations/index.js'
import type { DB } from './schema.js'

export interface MigrationOutcome {
  applied: string[]
}

/**
 * Brings the schema up to date. Kysely's migrator takes a lock first (a transaction-scoped advisory lock on
 * PostgreSQL), so several processes starting at once apply each migration exactly once.
 */
export async function migrateToLatest(db: Kysely<DB>): Promise<MigrationOutcome> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'herald_migrations',
    migrationLockTableName: 'herald_migrations_lock',
  })
  const { error, results = [] } = await migrator.migrateToLatest()
  if (error) {
    const failed = results.find((result) => result.status === 'Error')
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${String(error)}`, { cause: error })
  }
  return { applied: results.filter((result) => result.status === 'Success').map((result) => result.migrationName) }
}
