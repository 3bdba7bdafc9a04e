import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CHANGE_RETENTION_MS, type Change, ChangeFeed } from '../../src/platform/cache/change-feed.js'
import { createLogger } from '../../src/platform/logger.js'
import { type Database, openDatabase } from '../../src/platform/storage/database.js'
import { migrateToLatest } from '../../src/platform/storage/migrate.js'
import { TestClock } from '../support/clock.js'
import { createTestDatabase, type TestDatabase } from '../support/dialects.js'
import { forEachDialect } from '../support/herald.js'
import { eventually } from '../support/receiver.js'

/** What a feed told: each change read, and `*` for every time it said to forget everything. */
class Recorder {
  readonly told: string[] = []
  changed({ topic, key }: Change): void {
    this.told.push(`${topic}:${key}`)
  }
  forgetAll(): void {
    this.told.push('*')
  }
}

forEachDialect((dialect) => {
  describe('the cache change log', () => {
    let testDatabase: TestDatabase
    let database: Database
    const clock = new TestClock()

    beforeEach(async () => {
      testDatabase = await createTestDatabase(dialect)
      database = openDatabase(testDatabase.config)
      await migrateToLatest(database)
    })
    afterEach(async () => {
      await database.close()
      await testDatabase.drop()
    })

    async function startFeed(): Promise<{ feed: ChangeFeed; recorder: Recorder }> {
      const recorder = new Recorder()
      const feed = new ChangeFeed(database.db, database.dialect, clock, createLogger('silent'), recorder)
      await feed.start()
      return { feed, recorder }
    }

    const append = (key: string, db = database.db) => db.insertInto('cache_changes').values({ topic: 'client', key, changed_at: clock.now() }).execute()

    it('tells each change committed after it started, once, in order', async () => {
      await append('before')
      const { feed, recorder } = await startFeed()
      try {
        expect(await feed.poll()).toBe(0)
        await append('a')
        await append('b')
        expect(await feed.poll()).toBe(2)
        await append('c')
        await feed.poll()
        await feed.poll()
        expect(recorder.told).toEqual(['client:a', 'client:b', 'client:c'])
      } finally {
        await feed.stop()
      }
    })

    it.runIf(dialect === 'postgres')('tells a change that commits after a later-numbered one, once', async () => {
      const { feed, recorder } = await startFeed()
      let commitSlow = () => {}
      let slowAppended = () => {}
      const appended = new Promise<void>((resolve) => (slowAppended = resolve))
      const slowCommitted = database.db.transaction().execute(async (tx) => {
        await append('slow', tx)
        slowAppended()
        await new Promise<void>((resolve) => (commitSlow = resolve))
      })
      try {
        // The slow transaction has its number; a later one commits first and is read first.
        await appended
        await append('fast')
        await feed.poll()
        expect(recorder.told).toEqual(['client:fast'])
        commitSlow()
        await slowCommitted
        await feed.poll()
        await feed.poll()
        expect(recorder.told).toEqual(['client:fast', 'client:slow'])
      } finally {
        commitSlow()
        await slowCommitted
        await feed.stop()
      }
    })

    it('forgets everything only after a gap of more than half the retention', async () => {
      const { feed, recorder } = await startFeed()
      try {
        clock.advance(CHANGE_RETENTION_MS / 2)
        await append('within')
        await feed.poll()
        expect(recorder.told).toEqual(['client:within'])
        clock.advance(CHANGE_RETENTION_MS / 2 + 1)
        await feed.poll()
        expect(recorder.told).toEqual(['client:within', '*'])
      } finally {
        await feed.stop()
      }
    })

    it('forgets everything after a gap longer than the log may keep, and prunes what is past it', async () => {
      const { feed, recorder } = await startFeed()
      try {
        await append('old')
        clock.advance(CHANGE_RETENTION_MS + 1)
        await append('new')
        await feed.poll()
        expect(recorder.told).toEqual(['*'])
        // On PostgreSQL a change is prunable once every transaction open anywhere in the cluster is younger than it:
        // another test's transaction on the shared server may hold that back for a moment.
        let pruned = 0
        await eventually(async () => (pruned += await feed.prune(100)) > 0, 10_000, 'the old change to be prunable')
        expect(pruned).toBe(1)
        const left = await database.db.selectFrom('cache_changes').select('key').execute()
        expect(left.map((row) => row.key)).toEqual(['new'])
      } finally {
        await feed.stop()
      }
    })
  })
})
