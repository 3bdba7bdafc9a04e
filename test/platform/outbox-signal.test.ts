import pg from 'pg'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { Outbox } from '../../src/platform/events/outbox.js'
import { guardedEventsFor } from '../../src/platform/events/sql/index.js'
import { createLogger } from '../../src/platform/logger.js'
import { Notifications } from '../../src/platform/notifications/notifications.js'
import { type Database, openDatabase } from '../../src/platform/storage/database.js'
import { migrateToLatest } from '../../src/platform/storage/migrate.js'
import { transaction } from '../../src/platform/storage/transaction.js'
import { createTestDatabase, type TestDatabase } from '../support/dialects.js'
import { forEachDialect } from '../support/herald.js'

const NOW = Date.UTC(2026, 0, 1)

/**
 * The outbox's wake-up signal for the webhook workers travels with the event's insert (in its RETURNING on
 * PostgreSQL): heard by other processes once the transaction commits, by this one's handlers after commit, and by
 * nobody when it rolls back; a guarded change (a compare-and-set) and its event are written both or neither.
 */
forEachDialect((dialect) => {
  let testDatabase: TestDatabase
  let database: Database
  let notifications: Notifications

  beforeEach(async () => {
    testDatabase = await createTestDatabase(dialect)
    database = openDatabase(testDatabase.config)
    await migrateToLatest(database)
    notifications = new Notifications(database, createLogger('silent'))
  })
  afterEach(async () => {
    await notifications.close()
    await database.close()
    await testDatabase.drop()
  })

  async function account(): Promise<string> {
    await database.db.insertInto('accounts').values({ id: 'acct_1', name: 'a', status: 'active', admin_client_id: 'c', created_at: NOW, updated_at: NOW }).execute()
    return 'acct_1'
  }

  it('signals the webhook workers when an event commits, and not when its transaction rolls back', async () => {
    const accountId = await account()
    const heard: string[] = []
    notifications.on('herald_webhooks', (payload) => heard.push(payload))
    const outbox = new Outbox(notifications)
    const listener = dialect === 'postgres' && testDatabase.config.dialect === 'postgres' ? new pg.Client({ connectionString: testDatabase.config.connectionString }) : undefined
    const elsewhere: string[] = []
    try {
      if (listener) {
        await listener.connect()
        await listener.query('listen herald_webhooks')
      }
      const notified = new Promise<void>((resolve) => listener?.on('notification', ({ payload }) => resolve(void elsewhere.push(payload ?? ''))))

      await expect(
        transaction(database.db, async (tx) => {
          await outbox.record(tx, accountId, 'test.rolled_back', {}, NOW)
          throw new Error('rolled back')
        }),
      ).rejects.toThrow('rolled back')
      expect(heard).toEqual([])

      await transaction(database.db, (tx) => outbox.recordAll(tx, [{ accountId, type: 'test.one', data: {} }, { accountId, type: 'test.two', data: {} }], NOW))
      expect(heard).toEqual(['events'])
      expect((await database.db.selectFrom('events').select('type').orderBy('type').execute()).map((row) => row.type)).toEqual(['test.one', 'test.two'])
      if (listener) {
        await notified
        // The rolled-back transaction sent nothing: the first notification heard is the committed one's, and once.
        expect(elsewhere).toEqual(['events'])
      }
    } finally {
      await listener?.end()
    }
  })

  it('records the event of a guarded change only when the guard changed a row, and signals only then', async () => {
    const accountId = await account()
    const heard: string[] = []
    notifications.on('herald_webhooks', (payload) => heard.push(payload))
    const guarded = guardedEventsFor(database.dialect, database.db, new Outbox(notifications), notifications)
    const disabling = (from: 'active' | 'disabled') => (db: typeof database.db) => db.updateTable('accounts').set({ status: 'disabled' }).where('id', '=', accountId).where('status', '=', from)
    const events = () => database.db.selectFrom('events').select(['type', 'account_id']).execute()

    expect(await guarded.recordIf(disabling('disabled'), { accountId, type: 'test.nothing', data: {} }, NOW)).toBe(false)
    expect(await events()).toEqual([])
    expect(heard).toEqual([])

    expect(await guarded.recordIf(disabling('active'), { accountId, type: 'test.disabled', data: { why: 'test' } }, NOW)).toBe(true)
    expect(await events()).toEqual([{ type: 'test.disabled', account_id: accountId }])
    expect((await database.db.selectFrom('accounts').select('status').executeTakeFirstOrThrow()).status).toBe('disabled')
    expect(heard).toEqual(['events'])

    // The compare-and-set holds: the same change again changes nothing and announces nothing.
    expect(await guarded.recordIf(disabling('active'), { accountId, type: 'test.again', data: {} }, NOW)).toBe(false)
    expect(await events()).toHaveLength(1)
  })
})
