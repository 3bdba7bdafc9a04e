import pg from 'pg'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { Outbox } from '../../src/platform/events/outbox.js'
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
 * nobody when it rolls back.
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
})
