import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { migrateToLatest } from '../../src/platform/storage/migrate.js'
import { forEachDialect, useBareDatabase } from '../support/herald.js'
import { TENANT_TABLES } from '../support/tenancy-audit.js'
import { TENANT_REFERENCES, foreignKeysTo, insertAccountParents, referencingTable } from '../support/tenant-rows.js'

/** PostgreSQL's foreign_key_violation (SQLSTATE 23503), or SQLite's extended result code for it. */
function isForeignKeyViolation(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY'
}

/** DESIGN.md: a tenant table's foreign keys are composite `(account_id, id)`, so no row can point at another account's row. */
forEachDialect((dialect) => {
  describe('tenancy in the schema', () => {
    const database = useBareDatabase(dialect)

    it('makes every foreign key between tenant tables composite, on the account and the id', async () => {
      const { db } = database()
      await migrateToLatest(database())
      const keys = await foreignKeysTo(db, dialect, TENANT_TABLES)
      expect(keys.sort()).toEqual(TENANT_REFERENCES.map((reference) => reference.key).sort())
    })

    describe.each(TENANT_REFERENCES)('$key', (reference) => {
      it("refuses a row of one account that points at another account's row, and takes one that points at its own", async () => {
        const { db } = database()
        await migrateToLatest(database())
        await insertAccountParents(db, 'acct_a')
        await insertAccountParents(db, 'acct_b')

        const error = await reference.insert(db, 'acct_b', 'acct_a').then(
          () => undefined,
          (failure: unknown) => failure,
        )
        expect(isForeignKeyViolation(error), String(error)).toBe(true)

        const rowsOfB = async () => {
          const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(referencingTable(reference))} where account_id = 'acct_b'`.execute(db)
          return Number(rows[0]?.n)
        }
        const before = await rowsOfB()
        await reference.insert(db, 'acct_b', 'acct_b')
        expect(await rowsOfB()).toBe(before + 1)
      })
    })
  })
})
