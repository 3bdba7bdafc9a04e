import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { forEachDialect, useBareDatabase } from '../support/herald.js'

const COLUMNS = { id: 'text', n: 'integer', at: 'bigint', note: 'text' } as const

forEachDialect((dialect) => {
  describe('jsonRows', () => {
    const database = useBareDatabase(dialect)

    const read = async (rows: ReadonlyArray<Record<keyof typeof COLUMNS, string | number | null>>) =>
      (await sql<Record<string, unknown>>`select id, n, at, note from ${database().dialect.jsonRows(COLUMNS, rows)} as r order by id`.execute(database().db)).rows

    it('reads back every row with its types: text, integers, millisecond timestamps and nulls', async () => {
      const rows = [
        { id: 'a', n: 7, at: 1_795_000_000_123, note: 'plain' },
        { id: 'b', n: -1, at: 0, note: null },
        { id: 'c', n: null, at: null, note: `quotes ' and " and \\ and ✓ and 🦊 and a\nnewline` },
      ]
      expect(await read(rows)).toEqual(rows)
    })

    it('is an empty table for no rows', async () => {
      expect(await read([])).toEqual([])
    })

    it('keeps one statement text whatever the number of rows', () => {
      const text = (count: number) => sql`select * from ${database().dialect.jsonRows(COLUMNS, Array.from({ length: count }, (_, i) => ({ id: String(i), n: i, at: i, note: null })))} as r`.compile(database().db).sql
      expect(text(1)).toBe(text(500))
    })

    it('refuses a column name that is not a plain identifier', () => {
      expect(() => database().dialect.jsonRows({ 'id"; drop table accounts; --': 'text' }, [])).toThrow(/not a plain column name/)
    })
  })
})
