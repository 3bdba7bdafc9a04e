/**
 * Rows bound as a single JSON parameter and read as a derived table (SqlDialect.jsonRows). A multi-row `VALUES` list
 * has another statement text for every batch size, which SQLite prepares afresh each time and PostgreSQL parses with
 * one bound parameter per cell; this is one text for every size, and one parameter.
 *
 * Column names and types come from the calling code, never from input: they are written into the SQL.
 */
export type JsonColumnType = 'text' | 'integer' | 'bigint'

export type JsonCell = string | number | null

/** `name` quoted for the SQL text; only plain lower-case names are accepted. */
export function quotedColumn(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`jsonRows: ${name} is not a plain column name`)
  return `"${name}"`
}
