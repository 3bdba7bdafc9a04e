import { describe, expect, it } from 'vitest'
import { forAccount } from '../../src/platform/storage/account-queries.js'
import { transaction } from '../../src/platform/storage/transaction.js'
import { pickSweep } from '../../src/webhooks/worker-picks.js'
import { forEachDialect, useHerald } from '../support/herald.js'
import { describeSchema } from '../support/schema.js'
import { auditTenancy, namesAccount, TENANT_TABLES } from '../support/tenancy-audit.js'

/** The audit that every test Herald runs under (see startHerald), checked on statements of known shape. */
forEachDialect((dialect) => {
  describe('the tenancy audit', () => {
    const herald = useHerald(dialect, { worker: false })

    it('knows every tenant table of the migrated schema: each with an account_id column', async () => {
      const { tables } = await describeSchema(herald.current.herald.database.db, dialect)
      const withAccount = Object.entries(tables).filter(([, table]) => table.columns.some((column) => column.name === 'account_id')).map(([name]) => name)
      expect(new Set(withAccount)).toEqual(TENANT_TABLES)
    })

    it('reports a tenant-table statement of a module not named as cross-account, with the module and its line', async () => {
      const { database } = herald.current.herald
      const audit = auditTenancy(database.db, [])
      try {
        await transaction(database.db, (tx) => pickSweep(tx, database.dialect))
      } finally {
        audit.stop()
      }
      expect(audit.violations).toEqual([{ sql: expect.stringMatching(/from "webhook_sweeps"/), module: expect.stringMatching(/^webhooks\/worker-picks\.ts:\d+$/) }])
    })

    it('lets the modules named as cross-account through, and never a statement that names the account', async () => {
      const { database } = herald.current.herald
      const audit = auditTenancy(database.db, ['webhooks/worker-picks.ts'])
      try {
        await transaction(database.db, (tx) => pickSweep(tx, database.dialect))
      } finally {
        audit.stop()
      }
      expect(audit.violations).toEqual([])
      expect(audit.checked).toBe(1)
    })

    it('does not check what tests send themselves', async () => {
      const { database } = herald.current.herald
      const audit = auditTenancy(database.db, [])
      try {
        await database.db.selectFrom('webhook_sweeps').selectAll().execute()
        await forAccount(database.db, 'acct_none').selectFrom('webhook_sweeps').selectAll().execute()
      } finally {
        audit.stop()
      }
      expect(audit).toMatchObject({ violations: [], checked: 0 })
    })
  })
})

describe('what names an account', () => {
  it('is a comparison of account_id with a bound value or a list of them, or an INSERT that writes it', () => {
    expect(namesAccount('select * from "clients" where "clients"."account_id" = $1 and "id" = $2')).toBe(true)
    expect(namesAccount('select * from "clients" where account_id in (?, ?) order by account_id')).toBe(true)
    expect(namesAccount('insert into "scopes" ("name", "account_id") values ($1, $2)')).toBe(true)
  })

  it('is not a comparison with another column, a subquery, or an account an UPDATE sets', () => {
    expect(namesAccount('select * from webhook_endpoints e join clients c on c.account_id = e.account_id')).toBe(false)
    expect(namesAccount('select * from "events" where account_id in (select account_id from "clients")')).toBe(false)
    expect(namesAccount('update "clients" set "account_id" = $1 where "id" = $2')).toBe(false)
  })
})
