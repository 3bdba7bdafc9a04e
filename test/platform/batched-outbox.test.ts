import { afterEach, beforeEach, expect, it } from 'vitest'
import { BatchedOutbox } from '../../src/platform/events/batched-outbox.js'
import { Outbox } from '../../src/platform/events/outbox.js'
import { createLogger } from '../../src/platform/logger.js'
import { Notifications } from '../../src/platform/notifications/notifications.js'
import { type Database, openDatabase } from '../../src/platform/storage/database.js'
import { migrateToLatest } from '../../src/platform/storage/migrate.js'
import { TestClock } from '../support/clock.js'
import { createTestDatabase, type TestDatabase } from '../support/dialects.js'
import { forEachDialect } from '../support/herald.js'
import { eventually } from '../support/receiver.js'

const NOW = Date.UTC(2026, 0, 1)

/** Which event types have a subscriber: some known at once (cached), one only once read. */
function subscribedTo(_accountId: string, type: string): boolean | Promise<boolean> {
  if (type === 'test.unsubscribed') return false
  if (type === 'test.read') return Promise.resolve(true)
  if (type === 'test.unreadable') return Promise.reject(new Error('the subscriptions could not be read'))
  return true
}

/**
 * Events recorded in the background (a token exchange's) are written in batches over JSON rows, in the order they
 * were recorded, signal the webhook workers like any outbox event, and are all written by `close`.
 */
forEachDialect((dialect) => {
  let testDatabase: TestDatabase
  let database: Database
  let notifications: Notifications
  let events: BatchedOutbox

  beforeEach(async () => {
    testDatabase = await createTestDatabase(dialect)
    database = openDatabase(testDatabase.config)
    await migrateToLatest(database)
    notifications = new Notifications(database, createLogger('silent'))
    events = new BatchedOutbox(database.db, database.dialect, new Outbox(notifications), new TestClock(NOW), createLogger('silent'), subscribedTo)
    await database.db.insertInto('accounts').values({ id: 'acct_1', name: 'a', status: 'active', admin_client_id: 'c', created_at: NOW, updated_at: NOW }).execute()
  })
  afterEach(async () => {
    await events.close()
    await notifications.close()
    await database.close()
    await testDatabase.drop()
  })

  const written = () => database.db.selectFrom('events').select(['id', 'account_id', 'type', 'data', 'created_at', 'fanned_out_at', 'idempotency_key']).orderBy('id').execute()

  it('writes what was recorded shortly after, in order, and signals the workers', async () => {
    const heard: string[] = []
    notifications.on('herald_webhooks', (payload) => heard.push(payload))
    const count = 2500
    for (let index = 0; index < count; index++) events.record('acct_1', 'test.recorded', { index, text: 'quote " and \u00e9' })
    const rows = await eventually(async () => {
      const found = await written()
      return found.length === count && found
    })
    expect(rows.map((row) => (JSON.parse(row.data) as { index: number }).index)).toEqual([...Array(count).keys()])
    expect(rows[0]).toMatchObject({ account_id: 'acct_1', type: 'test.recorded', data: '{"index":0,"text":"quote \\" and \u00e9"}', created_at: NOW, fanned_out_at: null, idempotency_key: null })
    expect(heard.length).toBeGreaterThan(0)
    expect(new Set(heard)).toEqual(new Set(['events']))
  })

  it('writes everything still waiting when it closes', async () => {
    events.record('acct_1', 'test.last', { at: 'close' })
    await events.close()
    expect((await written()).map((row) => row.type)).toEqual(['test.last'])
  })

  it('records only the events some endpoint subscribes to, and those whose subscriptions could not be read', async () => {
    for (const type of ['test.unsubscribed', 'test.read', 'test.unreadable', 'test.cached']) events.record('acct_1', type, {})
    await events.close()
    expect((await written()).map((row) => row.type).sort()).toEqual(['test.cached', 'test.read', 'test.unreadable'])
  })
})
