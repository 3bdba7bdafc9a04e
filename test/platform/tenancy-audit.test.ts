import { describe, expect, it } from 'vitest'
import { forAccount } from '../../src/platform/storage/account-queries.js'
import { transaction } from '../../src/platform/storage/transaction.js'
import { pickSweep } from '../../src/webhooks/worker-picks.js'
import { forEachDialect, useHerald } from '../support/herald.js'
import { auditTenancy } from '../support/tenancy-audit.js'

/** The audit that every test Herald runs under (see startHerald), checked on statements of known shape. */
forEachDialect((dialect) => {
  describe('the tenancy audit', () => {
    const herald = useHerald(dialect, { worker: false })

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
