import { CompiledQuery, type Kysely, type QueryExecutor, sql } from 'kysely'
import type { DB } from '../../src/platform/storage/schema.js'
import type { DialectName } from './dialects.js'

export interface Recorder {
  /** Every statement sent since recording began (or the array was emptied), as sent. */
  statements: CompiledQuery[]
  stop(): void
}

/**
 * Records every statement `db` sends, its transactions' included, while the statements still run as they would: the
 * SQL a test then explains is exactly what Herald sent.
 */
export function recordStatements(db: Kysely<DB>): Recorder {
  const statements: CompiledQuery[] = []
  const stop = watchStatements(db, (query) => statements.push(query))
  return { statements, stop }
}

/**
 * Calls `seen` with every statement `db` sends, its transactions' included, just before it is sent and in the caller's
 * synchronous flow (Kysely compiles and sends inside `execute()`); answers what stops watching.
 */
export function watchStatements(db: Kysely<DB>, seen: (query: CompiledQuery) => void): () => void {
  return watch(db.getExecutor(), seen)
}

function watch(executor: QueryExecutor, seen: (query: CompiledQuery) => void): () => void {
  const execute = executor.executeQuery.bind(executor)
  const withConnectionProvider = executor.withConnectionProvider.bind(executor)
  executor.executeQuery = (query) => {
    seen(query)
    return execute(query)
  }
  executor.withConnectionProvider = (provider) => {
    const inner = withConnectionProvider(provider)
    watch(inner, seen)
    return inner
  }
  return () => {
    executor.executeQuery = execute
    executor.withConnectionProvider = withConnectionProvider
  }
}

/** A node of PostgreSQL's EXPLAIN (FORMAT JSON). */
export interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  Plans?: PlanNode[]
}

/** PostgreSQL's plan for `statement`, which is not run. */
export async function postgresPlan(db: Kysely<DB>, statement: CompiledQuery): Promise<PlanNode> {
  const { rows } = await db.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(CompiledQuery.raw(`explain (format json) ${statement.sql}`, [...statement.parameters]))
  return rows[0]!['QUERY PLAN'][0]!.Plan
}

/** SQLite's plan for `statement`: the lines of EXPLAIN QUERY PLAN. */
export async function sqlitePlan(db: Kysely<DB>, statement: CompiledQuery): Promise<string[]> {
  const { rows } = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${statement.sql}`, [...statement.parameters]))
  return rows.map((row) => row.detail)
}

/** The indexes through which the PostgreSQL plan `node` reads `table` (null: the whole table), in and below `node`. */
export function postgresScans(node: PlanNode, table: string): Array<string | null> {
  // A bitmap heap scan reads the rows its bitmap index scans found.
  const bitmapIndexes = (bitmap: PlanNode): string[] => (bitmap['Node Type'] === 'Bitmap Index Scan' ? [bitmap['Index Name']!] : (bitmap.Plans ?? []).flatMap(bitmapIndexes))
  // An UPDATE's own node names the table too, and reads nothing: the scans below it do.
  const own = node['Relation Name'] !== table || node['Node Type'] === 'ModifyTable' ? [] : node['Node Type'] === 'Bitmap Heap Scan' ? bitmapIndexes(node) : [node['Index Name'] ?? null]
  return [...own, ...(node.Plans ?? []).flatMap((child) => postgresScans(child, table))]
}

/** The indexes through which SQLite's plan reads `table` or `alias` (null: the whole table; rowid: its own key). */
export function sqliteScans(lines: readonly string[], name: string): Array<string | null> {
  const scans: Array<string | null> = []
  for (const line of lines) {
    const scan = new RegExp(`^(?:SCAN|SEARCH) ${name}\\b(?: USING (?:COVERING )?INDEX (\\S+)| USING (INTEGER )?PRIMARY KEY)?`).exec(line)
    if (scan) scans.push(scan[1] ?? (scan[2] !== undefined ? 'rowid' : null))
  }
  return scans
}

/** The first column of `index`. */
export async function leadingColumn(db: Kysely<DB>, dialect: DialectName, index: string): Promise<string> {
  const query =
    dialect === 'postgres'
      ? sql<{ name: string }>`select a.attname as name from pg_index i join pg_class c on c.oid = i.indexrelid join pg_attribute a on a.attrelid = i.indrelid and a.attnum = i.indkey[0] where c.relname = ${index}`
      : sql<{ name: string }>`select name from pragma_index_info(${index}) where seqno = 0`
  const { rows } = await query.execute(db)
  return rows[0]?.name ?? `(${index}: no column found)`
}
