import { type Kysely, sql } from 'kysely'
import { createFlowLookups, createParentKeys, foreignKeyConstraint, TENANT_FOREIGN_KEYS } from './tables.js'

/**
 * Composite tenant keys on PostgreSQL: each is added (which checks every existing row, and fails the migration, in
 * its transaction, on a row that points at another account's) before the single-column key it replaces is dropped.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createParentKeys(db)
  // Indexed text compares byte by byte (collation "C"), as every other key column does.
  await sql`alter table authorization_flows alter column subject type text collate "C"`.execute(db)
  await createFlowLookups(db)
  for (const key of TENANT_FOREIGN_KEYS) {
    await sql.raw(`alter table "${key.table}" add ${foreignKeyConstraint(key)}`).execute(db)
    await sql.raw(`alter table "${key.table}" drop constraint "${key.table}_${key.column}_fkey"`).execute(db)
  }
}
