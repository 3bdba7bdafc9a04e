import { type CompiledQuery, sql } from 'kysely'
import { expect, it } from 'vitest'
import type { DB } from '../../src/platform/storage/schema.js'
import { type TestHerald, forEachDialect, useHerald } from '../support/herald.js'
import { call, createAccount, managementToken } from '../support/http.js'
import { leadingColumn, postgresPlan, postgresScans, recordStatements, sqlitePlan, sqliteScans } from '../support/statements.js'

/**
 * Each list of the API, run through HTTP on a data set where another account holds most rows, on both sides of the
 * listing account's in id order; the statements it ran are recorded as sent and explained on the same database. Every
 * one must walk an index led by the account (or by a key of the account's own that the filter names), never the
 * primary key of ids alone nor the whole table: those read and discard the other account's rows.
 */

/** Rows of each table the other account holds before the listing account's, and as many after; the listing account holds as many. */
const ROWS = 8000

interface ListCase {
  path: string
  table: keyof DB
  /** Leading index columns that keep the scan to the listing account's rows. */
  leading?: string[]
}

const ACCOUNT_FIRST = ['account_id']

forEachDialect((dialect) => {
  const herald = useHerald(dialect, { worker: false })

  it('walks an index led by the account in every list, whatever another account holds', async () => {
    const h = herald.current
    const small = await createAccount(h, 'small')
    const big = await createAccount(h, 'big')
    const token = await managementToken(small)
    await skew(h, small.id, big.id)
    const list = (path: string) => call<{ data: Array<Record<string, unknown>>; next_cursor: string | null }>(`${small.base}${path}`, 'GET', { token })

    // The listing account's rows sit in the middle of the ids: its newest delivery is its last synthetic one.
    const first = await list('/webhooks/deliveries?limit=2')
    expect(first.status, first.text).toBe(200)
    expect(first.body.data.map((row) => row.id)).toEqual([syntheticId('dlv', 'm', ROWS), syntheticId('dlv', 'm', ROWS - 1)])
    const cursor = first.body.next_cursor
    expect(cursor).not.toBeNull()

    const cases: ListCase[] = [
      { path: '/webhooks/deliveries', table: 'webhook_deliveries' },
      { path: `/webhooks/deliveries?cursor=${cursor}`, table: 'webhook_deliveries' },
      { path: '/webhooks/deliveries?status=succeeded', table: 'webhook_deliveries' },
      { path: '/webhooks/deliveries?status=failed', table: 'webhook_deliveries' },
      { path: '/webhooks/deliveries?status=pending', table: 'webhook_deliveries' },
      { path: '/webhooks/deliveries?endpoint_id=ep_small', table: 'webhook_deliveries' },
      { path: '/webhooks/deliveries?endpoint_id=ep_small&status=failed', table: 'webhook_deliveries' },
      { path: '/webhooks/deliveries?event_type=list.plan', table: 'webhook_deliveries' },
      { path: '/webhooks/deliveries?since=1971-01-01T00:00:00Z&until=2100-01-01T00:00:00Z', table: 'webhook_deliveries' },
      { path: `/webhooks/deliveries?event_id=${syntheticId('evt', 'm', 7)}`, table: 'webhook_deliveries', leading: ['account_id', 'event_id'] },
      { path: `/webhooks/deliveries/${syntheticId('dlv', 'm', 7)}`, table: 'webhook_attempts', leading: ['delivery_id'] },
      { path: '/webhooks/events', table: 'events' },
      { path: '/webhooks/events?type=list.plan', table: 'events' },
      { path: '/webhooks/endpoints', table: 'webhook_endpoints' },
      { path: '/webhooks/subscriptions', table: 'webhook_subscriptions' },
      { path: `/webhooks/subscriptions?endpoint_id=${syntheticId('ep', 'm', 7)}`, table: 'webhook_subscriptions', leading: ['account_id', 'endpoint_id'] },
      { path: '/oauth/clients', table: 'clients' },
      { path: '/oauth/scopes', table: 'scopes' },
      { path: '/oauth/registration-tokens', table: 'registration_tokens' },
    ]
    const recorder = recordStatements(h.herald.database.db)
    try {
      for (const { path, table, leading = ACCOUNT_FIRST } of cases) {
        recorder.statements.length = 0
        const response = await list(path)
        expect(response.status, `${path}: ${response.text}`).toBe(200)
        // Only the list's own statements: a lookup by id that the request makes on the side (the caller's client,
        // refreshed ahead of its cache expiry at a random moment) rightly walks the primary key.
        const statements = recorder.statements.filter((statement) => new RegExp(`\\bfrom "?${table}"?`, 'i').test(statement.sql) && /\border by\b/i.test(statement.sql))
        expect(statements.length, `${path}: no statement read ${table}`).toBeGreaterThan(0)
        for (const statement of statements) {
          const scans = await scansOf(h, statement, table)
          expect(scans.length, `${path}: ${statement.sql}`).toBeGreaterThan(0)
          for (const scan of scans) expect({ path, scan: scan.index === null ? 'the whole table' : `${scan.index} led by ${scan.leading}` }).toEqual({ path, scan: expect.stringMatching(new RegExp(` led by (${leading.join('|')})$`)) })
        }
      }
    } finally {
      recorder.stop()
    }
  })
})

/**
 * Blocks of ids, in the order ids of time sort in: before 2004 (`00`), after now (`01Z`) and after 2039 (`02`). The
 * listing account's rows are the middle block. Each id is 17 characters of its block and 9 digits, as long as Herald's.
 */
const BLOCKS = { a: '00'.padEnd(17, '0'), m: '01Z'.padEnd(17, '0'), z: '02'.padEnd(17, '0') }

function syntheticId(prefix: string, block: keyof typeof BLOCKS, n: number): string {
  return `${prefix}_${BLOCKS[block]}${String(100_000_000 + n)}`
}

/**
 * `ROWS` rows of each listed table for `accountId` with ids in the middle, and twice as many for `otherId`, half with
 * ids before them and half after. Deliveries are mostly succeeded, one in 50 failed and, for the other account, one in
 * 10 pending. Then the statistics, as autovacuum would keep them.
 */
async function skew(h: TestHerald, accountId: string, otherId: string): Promise<void> {
  const db = h.herald.database.db
  const blocks: Array<{ block: 'a' | 'm' | 'z'; account: string; name: string }> = [
    { block: 'a', account: otherId, name: 'big' },
    { block: 'm', account: accountId, name: 'small' },
    { block: 'z', account: otherId, name: 'big' },
  ]
  const id = (prefix: string, block: keyof typeof BLOCKS) => sql`${`${prefix}_${BLOCKS[block]}`} || cast(100000000 + n as text)`
  for (const { block, account, name } of blocks) {
    const pending = account === otherId ? sql`n % 50 <> 0 and n % 10 = 0` : sql`1 = 0`
    const series = sql`with recursive s(n) as (select 1 union all select n + 1 from s where n < ${sql.lit(ROWS)})`
    await sql`${series} insert into events (id, account_id, type, data, created_at, fanned_out_at)
      select ${id('evt', block)}, ${account}, 'list.plan', '{}', n, n from s`.execute(db)
    await sql`${series} insert into webhook_deliveries (id, account_id, event_id, event_type, endpoint_id, status, attempt_count, next_attempt_at, finished_at, created_at)
      select ${id('dlv', block)}, ${account}, ${id('evt', block)}, 'list.plan', ${`ep_${name}`},
        case when n % 50 = 0 then 'failed' when ${pending} then 'pending' else 'succeeded' end, 1,
        case when ${pending} then n end, case when not (${pending}) then n end, n
      from s`.execute(db)
    await sql`${series} insert into webhook_attempts (delivery_id, number, account_id, started_at, duration_ms, response_status)
      select ${id('dlv', block)}, 1, ${account}, n, 1, 204 from s`.execute(db)
    await sql`${series} insert into webhook_endpoints (id, account_id, url, description, status, metadata, max_in_flight, secret, created_at, updated_at)
      select ${id('ep', block)}, ${account}, 'https://example.com/hook', '', 'active', '{}', 20, 'sealed', n, n from s`.execute(db)
    await sql`${series} insert into webhook_subscriptions (id, account_id, endpoint_id, event_types, created_at)
      select ${id('sub', block)}, ${account}, ${id('ep', block)}, '["list.plan"]', n from s`.execute(db)
    await sql`${series} insert into clients (id, account_id, name, kind, secret_hash, token_endpoint_auth_method, grant_types, scope, metadata, credentials_changed_at, created_at, updated_at)
      select ${id('cli', block)}, ${account}, 'client', 'standard', null, 'none', '["authorization_code"]', '', '{}', n, n, n from s`.execute(db)
    await sql`${series} insert into scopes (account_id, name, description, kind, created_at, updated_at)
      select ${account}, ${id('scope', block)}, '', 'custom', n, n from s`.execute(db)
    await sql`${series} insert into registration_tokens (id, account_id, token_hash, scope, grant_types, max_uses, uses, expires_at, created_at)
      select ${id('iat', block)}, ${account}, ${id('digest', block)}, null, null, 1, 0, n, n from s`.execute(db)
  }
  await sql`analyze`.execute(db)
}

/** The scans of `table` in the plan of `statement`, with the leading column of each one's index. */
async function scansOf(h: TestHerald, statement: CompiledQuery, table: string): Promise<Array<{ index: string | null; leading: string | null }>> {
  const db = h.herald.database.db
  const indexes = h.dialect === 'postgres' ? postgresScans(await postgresPlan(db, statement), table) : sqliteScans(await sqlitePlan(db, statement), table)
  return Promise.all(indexes.map(async (index) => ({ index, leading: index === null ? null : await leadingColumn(db, h.dialect, index) })))
}
