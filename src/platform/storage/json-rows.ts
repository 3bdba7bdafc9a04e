import { type RawBuilder, sql } from 'kysely'
import type { DialectFeatures } from './database.js'

export type JsonColumnType = 'text' | 'integer' | 'bigint'

type Cell = string | number | null

/**
 * `rows` as a derived table with `columns`, bound as a single JSON parameter. A multi-row `VALUES` list has
 * another statement text for every batch size, which SQLite prepares afresh each time and PostgreSQL parses
 * with one bound parameter per cell; this is one text for every size, and one parameter.
 *
 * Column names and types come from the calling code, never from input: they are written into the SQL.
 */
export function jsonRows<C extends string>(features: DialectFeatures, columns: Readonly<Record<C, JsonColumnType>>, rows: ReadonlyArray<Readonly<Record<C, Cell>>>): RawBuilder<unknown> {
  const names = Object.keys(columns) as C[]
  if (features.jsonRows === 'json_to_recordset') {
    // `json`, not `jsonb`: the text is read once, row by row, where `jsonb` first builds the whole document in its
    // binary form. Parsing the completions' rows took 7% of PostgreSQL's time in the drain benchmark; with `json`
    // its CPU per delivery measured 54 µs against 57–59, in three interleaved pairs of runs.
    const definitions = names.map((name) => sql.raw(`${quote(name)} ${columns[name]}`))
    return sql`(select * from json_to_recordset(cast(${JSON.stringify(rows)} as json)) as r(${sql.join(definitions)}))`
  }
  // Each row as an array, its cells in column order: SQLite reads an array element by position, where an object's
  // member is found by comparing keys, which made a 256-row completion about 1.5 times as slow.
  // `->>` yields SQLite's own types: a whole number INTEGER, a string TEXT, null NULL.
  const json = JSON.stringify(rows.map((row) => names.map((name) => row[name])))
  const selections = names.map((name, index) => sql.raw(`value ->> ${index} as ${quote(name)}`))
  return sql`(select ${sql.join(selections)} from json_each(${json}))`
}

function quote(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`jsonRows: ${name} is not a plain column name`)
  return `"${name}"`
}
