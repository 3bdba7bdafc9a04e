import SQLite from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { whileBusy } from './sqlite-open.js'

const busy = () => new SQLite.SqliteError('database is locked', 'SQLITE_BUSY')

describe('whileBusy', () => {
  it('tries again while the file is locked, and returns what the step returns once it is not', () => {
    let calls = 0
    const result = whileBusy(() => {
      calls += 1
      if (calls < 3) throw busy()
      return 'wal'
    }, Number.POSITIVE_INFINITY)
    expect(result).toBe('wal')
    expect(calls).toBe(3)
  })

  it('gives up at the deadline with the last error, and never retries any other error', () => {
    let calls = 0
    let now = 0
    const stillBusy = () => {
      calls += 1
      now += 1000
      throw busy()
    }
    expect(() => whileBusy(stillBusy, 3000, () => now)).toThrow('database is locked')
    expect(calls).toBe(3)

    calls = 0
    const corrupt = () => {
      calls += 1
      throw new SQLite.SqliteError('file is not a database', 'SQLITE_NOTADB')
    }
    expect(() => whileBusy(corrupt, Number.POSITIVE_INFINITY)).toThrow('file is not a database')
    expect(calls).toBe(1)
  })
})
