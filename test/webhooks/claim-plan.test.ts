import { sql } from 'kysely'
import { expect, it } from 'vitest'
import { Outbox } from '../../src/platform/events/outbox.js'
import { DeliveryQueue } from '../../src/webhooks/delivery/delivery-queue.js'
import { forEachDialect, useHerald } from '../support/herald.js'
import { createAccount } from '../support/http.js'
import { type PlanNode, postgresPlan, postgresScans, recordStatements, sqlitePlan, sqliteScans } from '../support/statements.js'
import { insertBacklog, LOCAL_DELIVERY, subscribedEndpoint, webhookApi } from './support.js'

/**
 * A table that keeps a long history of finished deliveries has statistics that count few pending ones, or none when
 * they were taken while the queue was empty. The claim must still find each delivery it locks by its id, through the
 * primary key: through the partial queue index, each lookup reads every queued delivery's entry, and a backlog drains
 * in time that grows with its square.
 */
forEachDialect((dialect) => {
  const h = useHerald(dialect, { ...LOCAL_DELIVERY, worker: false })

  it('reads the queue through its index and locks what it claims through the primary key, when the statistics count no pending delivery', async () => {
    const { herald, clock } = h.current
    const db = herald.database.db
    const account = await createAccount(h.current)
    const endpoint = await subscribedEndpoint(await webhookApi(account, clock), 'http://127.0.0.1:9/hook', ['a.*'])
    const now = clock.now()
    await insertBacklog(db, account.id, endpoint.id, 'pending', 2000, now)
    await db.updateTable('webhook_deliveries').set({ status: 'succeeded', attempt_count: 1, finished_at: now }).where('endpoint_id', '=', endpoint.id).execute()
    await sql`${sql.raw(dialect === 'postgres' ? 'vacuum analyze' : 'analyze')}`.execute(db)
    await insertBacklog(db, account.id, endpoint.id, 'pending', 500, now)

    // The queue on a handle of its own, whose statements are recorded; Herald's is left as it is.
    const recorded = db.withPlugin({ transformQuery: ({ node }) => node, transformResult: async ({ result }) => result })
    const recorder = recordStatements(recorded)
    const queue = new DeliveryQueue(recorded, herald.database.dialect, clock, herald.settings, herald.webhooks.endpoints, new Outbox(herald.notifications))
    const claim = await queue.claim(20, 60_000, new Map())
    recorder.stop()
    expect(claim.deliveries).toHaveLength(20)

    // Every statement of the claim reads deliveries through the queue index (the endpoints that have due deliveries,
    // and each one's first due) or by id through the primary key; the lease reads the picked ones by id: on
    // PostgreSQL one lateral lookup per id under a row lock, on SQLite a search of `d` by id.
    const primaryKey = dialect === 'postgres' ? 'webhook_deliveries_pkey' : 'sqlite_autoindex_webhook_deliveries_1'
    const reads = recorder.statements.filter((statement) => /"webhook_deliveries"/.test(statement.sql))
    const lease = reads.filter((statement) => /"e"\."data"/.test(statement.sql))
    expect(lease).toHaveLength(1)
    for (const statement of reads) {
      let scans: Array<string | null>
      if (dialect === 'postgres') {
        const plan = await postgresPlan(db, statement)
        scans = postgresScans(plan, 'webhook_deliveries')
        const locks: PlanNode[] = []
        const visit = (node: PlanNode): void => {
          if (node['Node Type'] === 'LockRows') locks.push(node)
          else for (const child of node.Plans ?? []) visit(child)
        }
        visit(plan)
        if (statement === lease[0]) expect(locks.length).toBeGreaterThan(0)
        for (const lock of locks) expect(postgresScans(lock, 'webhook_deliveries')).toEqual([primaryKey])
      } else {
        const plan = await sqlitePlan(db, statement)
        scans = [...sqliteScans(plan, 'webhook_deliveries'), ...sqliteScans(plan, 'd')]
        if (statement === lease[0]) expect(sqliteScans(plan, 'd')).toEqual([primaryKey])
      }
      for (const scan of scans) expect({ statement: statement.sql, scan }).toEqual({ statement: statement.sql, scan: expect.toBeOneOf([primaryKey, 'webhook_deliveries_queue_idx']) })
    }
  })
})
