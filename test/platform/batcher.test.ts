import SQLite from 'better-sqlite3'
import { sql } from 'kysely'
import { beforeEach, describe, expect, inject, it } from 'vitest'
import { Batcher, type ItemOutcome } from '../../src/platform/storage/batcher.js'
import { type Tx, transaction } from '../../src/platform/storage/transaction.js'
import { forEachDialect, useBareDatabase } from '../support/herald.js'
import { eventually } from '../support/receiver.js'

/** Rows the work writes: one per item, named after it. A name starting with `bad` breaks the whole statement. */
async function writeNames(tx: Tx, names: readonly string[]): Promise<Array<ItemOutcome<number>>> {
  await sql`insert into written (name, size) values ${sql.join(names.map((name) => sql`(${name}, ${name.startsWith('bad') ? null : names.length})`))}`.execute(tx.db)
  return names.map((name) => (name.startsWith('refused') ? { error: new Error(`${name} is refused`) } : { value: names.length }))
}

forEachDialect((dialect) => {
  describe('Batcher', () => {
    const database = useBareDatabase(dialect)
    beforeEach(async () => {
      await sql`create table written (name text primary key, size integer not null)`.execute(database().db)
    })

    const written = async () => (await sql<{ name: string; size: number }>`select name, size from written order by name`.execute(database().db)).rows

    it('commits what arrives together in one transaction, and what queues meanwhile in the next', async () => {
      let releaseFirst = () => {}
      let firstStarted = () => {}
      const started = new Promise<void>((resolve) => (firstStarted = resolve))
      const released = new Promise<void>((resolve) => (releaseFirst = resolve))
      const commits = new Batcher(
        (names: readonly string[]) =>
          transaction(database().db, async (tx) => {
            if (names.includes('a')) {
              firstStarted()
              await released
            }
            return writeNames(tx, names)
          }),
        { concurrency: 1, maxBatch: 100 },
      )
      const first = [commits.submit('a'), commits.submit('b')]
      await started
      // a and b are in their transaction: c to e queue behind it and go together once it commits.
      const later = ['c', 'd', 'e'].map((name) => commits.submit(name))
      releaseFirst()
      expect(await Promise.all([...first, ...later])).toEqual([2, 2, 3, 3, 3])
      expect(await written()).toEqual(['a', 'b', 'c', 'd', 'e'].map((name) => ({ name, size: name < 'c' ? 2 : 3 })))
    })

    it('keeps batches within maxBatch and runs up to `concurrency` of them at once', async () => {
      let started = 0
      let inTransaction = 0
      let mostAtOnce = 0
      // Batches hold their transactions until a second batch has started: PostgreSQL runs its transaction beside
      // the first one's, while on SQLite's one connection it waits for the first to commit.
      let overlapped = false
      const secondBatchStarted = () => (overlapped ||= dialect === 'postgres' ? inTransaction === 2 : started === 2)
      const commits = new Batcher(
        (names: readonly string[]) => {
          started++
          return transaction(database().db, async (tx) => {
            mostAtOnce = Math.max(mostAtOnce, ++inTransaction)
            await eventually(secondBatchStarted, 10_000, 'a second batch')
            inTransaction--
            return writeNames(tx, names)
          })
        },
        { concurrency: 2, maxBatch: 3 },
      )
      const names = Array.from({ length: 10 }, (_, index) => `n${String(index).padStart(2, '0')}`)
      const sizes = await Promise.all(names.map((name) => commits.submit(name)))
      expect(sizes).toEqual([3, 3, 3, 3, 3, 3, 3, 3, 3, 1])
      expect(mostAtOnce).toBe(dialect === 'postgres' ? 2 : 1)
      expect((await written()).map((row) => row.name)).toEqual(names)
    })

    it('fails an item alone: its own error, or a statement it breaks, leaves the others of its batch written', async () => {
      const commits = new Batcher((names: readonly string[]) => transaction(database().db, (tx) => writeNames(tx, names)), { concurrency: 1, maxBatch: 100 })
      const first = commits.submit('first')
      await first
      const results = await Promise.allSettled([first, ...['ok1', 'bad', 'refused', 'ok2'].map((name) => commits.submit(name))])
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled'])
      expect(String((results[3] as PromiseRejectedResult).reason)).toContain('refused is refused')
      // The batch of four failed as a whole on `bad`; each item was then tried alone. A refused item's
      // writes are the work's to avoid: this work writes them anyway, which shows each ran in its own transaction.
      expect(await written()).toEqual([
        { name: 'first', size: 1 },
        { name: 'ok1', size: 1 },
        { name: 'ok2', size: 1 },
        { name: 'refused', size: 1 },
      ])
    })
  })
})

// SQLite's write lock is an unavailability a test can hold without a server to stop (see unavailable-database.test.ts).
describe.runIf(inject('dialects').includes('sqlite'))('Batcher on an unavailable database', () => {
  const database = useBareDatabase('sqlite')
  beforeEach(async () => {
    await sql`create table written (name text primary key, size integer not null)`.execute(database().db)
  })

  it('fails a whole batch at once when the database is unavailable, trying no item alone', async () => {
    const { db } = database()
    let runs = 0
    const commits = new Batcher(
      (names: readonly string[]) => {
        runs++
        return transaction(db, (tx) => writeNames(tx, names))
      },
      { concurrency: 1, maxBatch: 100 },
    )
    const file = (await sql<{ file: string }>`select file from pragma_database_list where name = 'main'`.execute(db)).rows[0]!.file
    // Another process holds the write lock past the busy timeout (shortened rather than waited for).
    const other = new SQLite(file)
    await sql`pragma busy_timeout = 0`.execute(db)
    other.exec('begin immediate')
    try {
      const results = await Promise.allSettled(['a', 'b', 'c'].map((name) => commits.submit(name)))
      expect(results.map((result) => result.status === 'rejected' && (result.reason as { code?: string }).code)).toEqual(['SQLITE_BUSY', 'SQLITE_BUSY', 'SQLITE_BUSY'])
      expect(runs).toBe(1)
    } finally {
      other.exec('rollback')
      other.close()
    }
    expect((await sql`select name from written`.execute(database().db)).rows).toEqual([])
  })
})
