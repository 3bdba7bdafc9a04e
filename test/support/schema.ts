import { type Kysely, sql } from 'kysely'
import ts from 'typescript'
import type { DB } from '../../src/platform/storage/schema.js'
import type { DialectName } from './dialects.js'

/** A database's schema as its catalog tells it: what two databases must share to be the same. */
export interface SchemaDescription {
  tables: Record<string, TableDescription>
  /** Triggers and (on PostgreSQL) functions, by name: their definitions. */
  routines: Record<string, string>
}

export interface TableDescription {
  /** In the table's order. */
  columns: ColumnDescription[]
  primaryKey: string[]
  /** Every index but the primary key's, by name. */
  indexes: Record<string, IndexDescription>
  /** Checks and foreign keys: on PostgreSQL each constraint's definition by name; SQLite keeps them in `create table`. */
  constraints: Record<string, string> | string
  /** PostgreSQL's storage parameters (fillfactor), if any. */
  storage: string[] | null
}

export interface ColumnDescription {
  name: string
  type: string
  /** As the catalog says: SQLite lets a primary key column that is not an integer hold null unless declared not null. */
  nullable: boolean
  default: string | null
  collation: string | null
}

export interface IndexDescription {
  /** The key columns, in order. */
  columns: string[]
  /** The statement that would create it, its condition included. */
  definition: string
}

/** A statement's text with its layout (indentation, line breaks) left out, which is no part of a schema. */
const squeezed = (statement: string) => statement.replace(/\s+/g, ' ')

/** Kysely's own tables, which no migration creates. */
const MIGRATOR_TABLES = 'herald_migrations%'

export async function describeSchema(db: Kysely<DB>, dialect: DialectName): Promise<SchemaDescription> {
  return dialect === 'postgres' ? describePostgres(db) : describeSqlite(db)
}

async function describePostgres(db: Kysely<DB>): Promise<SchemaDescription> {
  const tables: Record<string, TableDescription> = {}
  const { rows: relations } = await sql<{ name: string; storage: string[] | null }>`
    select c.relname as name, c.reloptions as storage from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relkind = 'r' and c.relname not like ${MIGRATOR_TABLES}`.execute(db)
  for (const { name, storage } of relations) tables[name] = { columns: [], primaryKey: [], indexes: {}, constraints: {}, storage }

  const { rows: columns } = await sql<ColumnDescription & { table: string; identity: string }>`
    select t.relname as table, a.attname as name, format_type(a.atttypid, a.atttypmod) as type, not a.attnotnull as nullable,
      pg_get_expr(d.adbin, d.adrelid) as default, co.collname as collation, a.attidentity as identity
    from pg_attribute a join pg_class t on t.oid = a.attrelid join pg_namespace n on n.oid = t.relnamespace
    left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    left join pg_collation co on co.oid = a.attcollation and a.attcollation <> 100 -- 100: the database's default
    where n.nspname = current_schema() and t.relkind = 'r' and a.attnum > 0 and not a.attisdropped
    order by t.relname, a.attnum`.execute(db)
  for (const { table, identity, ...column } of columns) {
    tables[table]?.columns.push({ ...column, type: identity ? `${column.type} generated ${identity === 'a' ? 'always' : 'by default'} as identity` : column.type })
  }

  const { rows: indexes } = await sql<{ table: string; name: string; primary: boolean; columns: string[]; definition: string }>`
    select t.relname as table, i.relname as name, x.indisprimary as primary, pg_get_indexdef(x.indexrelid) as definition,
      array(select pg_get_indexdef(x.indexrelid, k, true) from generate_series(1, x.indnkeyatts) as k order by k) as columns
    from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
    join pg_namespace n on n.oid = t.relnamespace
    where n.nspname = current_schema() and t.relname not like ${MIGRATOR_TABLES}`.execute(db)
  for (const { table, name, primary, columns, definition } of indexes) {
    const described = tables[table]
    if (!described) continue
    if (primary) described.primaryKey = columns
    else described.indexes[name] = { columns, definition }
  }

  const { rows: constraints } = await sql<{ table: string; name: string; definition: string }>`
    select t.relname as table, c.conname as name, pg_get_constraintdef(c.oid) as definition
    from pg_constraint c join pg_class t on t.oid = c.conrelid join pg_namespace n on n.oid = t.relnamespace
    where n.nspname = current_schema() and t.relname not like ${MIGRATOR_TABLES}`.execute(db)
  for (const { table, name, definition } of constraints) {
    const described = tables[table]
    if (described && typeof described.constraints !== 'string') described.constraints[name] = definition
  }

  const { rows: routines } = await sql<{ name: string; definition: string }>`
    select p.proname as name, pg_get_functiondef(p.oid) as definition from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = current_schema()
    union all
    select g.tgname, pg_get_triggerdef(g.oid) from pg_trigger g join pg_class t on t.oid = g.tgrelid
    join pg_namespace n on n.oid = t.relnamespace where n.nspname = current_schema() and not g.tgisinternal`.execute(db)
  return { tables, routines: Object.fromEntries(routines.map(({ name, definition }) => [name, squeezed(definition)])) }
}

async function describeSqlite(db: Kysely<DB>): Promise<SchemaDescription> {
  const tables: Record<string, TableDescription> = {}
  const { rows: relations } = await sql<{ name: string; definition: string }>`
    select name, sql as definition from sqlite_master
    where type = 'table' and name not like 'sqlite\_%' escape '\\' and name not like ${MIGRATOR_TABLES}`.execute(db)
  for (const { name, definition } of relations) tables[name] = { columns: [], primaryKey: [], indexes: {}, constraints: squeezed(definition), storage: null }

  const { rows: columns } = await sql<{ table: string; name: string; type: string; notnull: number; default: string | null; pk: number }>`
    select m.name as "table", c.name, c.type, c."notnull", c.dflt_value as "default", c.pk
    from sqlite_master as m, pragma_table_info(m.name) as c where m.type = 'table' order by m.name, c.cid`.execute(db)
  for (const { table, name, type, notnull, default: value, pk } of columns) {
    const described = tables[table]
    if (!described) continue
    described.columns.push({ name, type, nullable: notnull === 0, default: value, collation: null })
    if (pk > 0) described.primaryKey[pk - 1] = name
  }

  const { rows: indexes } = await sql<{ table: string; name: string; definition: string; column: string }>`
    select m.tbl_name as "table", m.name, m.sql as definition, i.name as "column"
    from sqlite_master as m, pragma_index_info(m.name) as i where m.type = 'index' and m.sql is not null
    order by m.name, i.seqno`.execute(db)
  for (const { table, name, definition, column } of indexes) {
    const described = tables[table]
    if (!described) continue
    const index = (described.indexes[name] ??= { columns: [], definition: squeezed(definition) })
    index.columns.push(column)
  }

  const { rows: triggers } = await sql<{ name: string; definition: string }>`
    select name, sql as definition from sqlite_master where type = 'trigger'`.execute(db)
  return { tables, routines: Object.fromEntries(triggers.map(({ name, definition }) => [name, squeezed(definition)])) }
}

export interface DeclaredColumn {
  name: string
  nullable: boolean
}

/**
 * The tables and columns that an interface of TypeScript declares (`DB` in src/platform/storage/schema.ts), read with
 * the compiler: a column is nullable when its type admits null.
 */
export function declaredTables(file: string, interfaceName: string): Record<string, DeclaredColumn[]> {
  const program = ts.createProgram([file], { strict: true, noEmit: true, skipLibCheck: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, types: [] })
  const checker = program.getTypeChecker()
  const source = program.getSourceFile(file)
  const declaration = source?.statements.find((statement): statement is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(statement) && statement.name.text === interfaceName)
  if (!source || !declaration) throw new Error(`${file} declares no interface ${interfaceName}`)
  const typeOf = (symbol: ts.Symbol) => checker.getTypeOfSymbolAtLocation(symbol, declaration)
  const admitsNull = (type: ts.Type) => (type.isUnion() ? type.types : [type]).some((member) => (member.flags & ts.TypeFlags.Null) !== 0)
  return Object.fromEntries(
    checker
      .getTypeAtLocation(declaration)
      .getProperties()
      .map((table) => [table.name, typeOf(table).getProperties().map((column) => ({ name: column.name, nullable: admitsNull(typeOf(column)) }))]),
  )
}
