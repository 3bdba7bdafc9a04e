import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { forAccount } from '../../src/platform/storage/account-queries.js'
import { transaction } from '../../src/platform/storage/transaction.js'
import { pickSweep } from '../../src/webhooks/worker-picks.js'
import { forEachDialect, useHerald } from '../support/herald.js'
import { describeSchema } from '../support/schema.js'
import { unscopedTables } from '../support/account-scoping.js'
import { auditTenancy, CROSS_ACCOUNT_MODULES, TENANT_TABLES } from '../support/tenancy-audit.js'

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
      expect(audit.violations).toEqual([
        { sql: expect.stringMatching(/from "webhook_sweeps"/), module: expect.stringMatching(/^webhooks\/worker-picks\.ts:\d+$/), tables: ['webhook_sweeps'] },
      ])
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

describe('docs/architecture/tenancy.md', () => {
  const doc = readFileSync(fileURLToPath(new URL('../../docs/architecture/tenancy.md', import.meta.url)), 'utf8')
  /** The backticked names in one column (0 for the first) of the Markdown table whose header row is `header`. */
  const tableCells = (header: string, column: number) => {
    expect(doc).toContain(header)
    const lines = doc.slice(doc.indexOf(header)).split('\n')
    const rows = lines.slice(2, lines.findIndex((line) => !line.startsWith('|')))
    return rows.flatMap((row) => [...(row.split('|')[column + 1] ?? '').matchAll(/`([^`]+)`/g)].map((match) => match[1]!))
  }

  it('lists the tenant tables the audit knows, and no other', () => {
    expect(tableCells('| area | tenant tables |', 1).sort()).toEqual([...TENANT_TABLES].sort())
  })

  it('lists the cross-account modules and methods the audit lets through, and no other', () => {
    expect(tableCells('| module | why it spans accounts |', 0).sort()).toEqual([...CROSS_ACCOUNT_MODULES].sort())
  })
})

describe('which tenant tables a statement leaves without an account', () => {
  const unscoped = (statement: string) => unscopedTables(statement, TENANT_TABLES)

  it('none, when each is compared with a bound value or a list of them, by the name the statement gives it', () => {
    expect(unscoped('select * from "clients" where "clients"."account_id" = $1 and "id" = $2')).toEqual([])
    expect(unscoped('select * from "clients" where account_id in (?, ?) order by account_id')).toEqual([])
    expect(unscoped('select * from "clients" where ("account_id", "id") in ((?, ?), (?, ?))')).toEqual([])
    expect(unscoped('select * from custom_event_types t where (t.account_id, t.name) in (select account_id, type from json_each(?))')).toEqual([])
    expect(unscoped('select * from "clients" as "c" inner join "client_scopes" as "s" on "s"."client_id" = "c"."id" where "c"."account_id" = $1 and "s"."account_id" = $1')).toEqual([])
  })

  it('none, when an INSERT writes the account, or a join equates a table with one that is scoped', () => {
    expect(unscoped('insert into "scopes" ("name", "account_id") values ($1, $2)')).toEqual([])
    expect(unscoped('insert into "consents" ("account_id", "client_id") select "account_id", "id" from "clients" where "account_id" = $1')).toEqual([])
    expect(unscoped('with guard as (update "authorization_flows" set "stage" = $1 where "account_id" = $2 and "id" = $3 returning 1) insert into events ("id", "account_id") select "id", "account_id" from (select * from json_to_recordset(cast($4 as json)) as r("id" text, "account_id" text)) as e where exists (select 1 from guard)')).toEqual([])
    expect(unscoped('select * from webhook_endpoints e join clients c on c.account_id = e.account_id and c.id = e.client_id where e.account_id = ?')).toEqual([])
    expect(unscoped('select * from "clients" where "account_id" = $1 and exists (select 1 from "client_scopes" where "client_id" = "clients"."id" and "account_id" = "clients"."account_id")')).toEqual([])
    expect(unscoped('insert into webhook_deliveries (id, account_id, endpoint_id) select d.id, d.account_id, d.endpoint_id from (select value ->> 0 as "id", value ->> 1 as "account_id", value ->> 2 as "endpoint_id" from json_each(?)) as d inner join webhook_endpoints as e on e.account_id = d.account_id and e.id = d.endpoint_id')).toEqual([])
  })

  it('a joined table that only the other is scoped for, named by its alias', () => {
    expect(unscoped('select * from "clients" as "c" inner join "client_scopes" as "s" on "s"."client_id" = "c"."id" where "c"."account_id" = $1')).toEqual(['s'])
    expect(unscoped('select * from refresh_tokens join authorization_flows on authorization_flows.id = refresh_tokens.grant_id where refresh_tokens.account_id = ?')).toEqual(['authorization_flows'])
    expect(unscoped('insert into webhook_deliveries (id, account_id, endpoint_id) select d.id, d.account_id, d.endpoint_id from (select value ->> 0 as "id", value ->> 1 as "account_id", value ->> 2 as "endpoint_id" from json_each(?)) as d inner join webhook_endpoints as e on e.id = d.endpoint_id')).toEqual(['e'])
  })

  it('a table of a subquery, when only the outer query names the account', () => {
    expect(unscoped('select * from "events" where account_id = $1 and id in (select event_id from "webhook_deliveries" where status = $2)')).toEqual(['webhook_deliveries'])
    expect(unscoped('delete from "consents" where "account_id" = $1 and "client_id" in (select "id" from "clients" where "name" = $2)')).toEqual(['clients'])
  })

  it('a comparison with a column of a table no one scoped, an account an UPDATE sets, or an unqualified one among two tables', () => {
    expect(unscoped('select * from webhook_endpoints e join clients c on c.account_id = e.account_id')).toEqual(['e', 'c'])
    expect(unscoped('select * from "events" where account_id in (select account_id from "clients")')).toEqual(['events', 'clients'])
    expect(unscoped('update "clients" set "account_id" = $1 where "id" = $2')).toEqual(['clients'])
    expect(unscoped('with gone as (delete from "consents" where "client_id" = $1 returning 1) select count(*) from gone')).toEqual(['consents'])
    expect(unscoped('select * from clients c join client_scopes s on s.client_id = c.id where account_id = ?')).toEqual(['c', 's'])
  })

  it('no table that is not a tenant table', () => {
    expect(unscoped('select * from "accounts" where "id" = $1')).toEqual([])
    expect(unscoped('delete from "webhook_leases" where "expires_at" < $1')).toEqual([])
  })
})
