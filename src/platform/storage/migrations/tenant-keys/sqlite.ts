import { type Kysely, sql } from 'kysely'
import { createFlowLookups, createParentKeys, foreignKeyConstraint, keysByTable, type TenantForeignKey } from './tables.js'

/**
 * Composite tenant keys on SQLite, which can't alter a table's foreign keys: each table that holds one is rebuilt by
 * the procedure of https://www.sqlite.org/lang_altertable.html#otheralter (create the new table, copy, drop the old,
 * rename, recreate its indexes). Foreign keys are off meanwhile, or dropping `authorization_flows` would delete the
 * refresh tokens that refer to it; `foreign_key_check` then proves every row, before the transaction commits.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(db)
  const enforced = rows[0]?.foreign_keys === 1
  // A no-op inside a transaction: Kysely runs SQLite's migrations outside one, so it takes effect here.
  await sql`pragma foreign_keys = off`.execute(db)
  try {
    await db.transaction().execute(async (trx) => {
      for (const [table, keys] of keysByTable()) await rebuild(trx, table, keys)
      await createParentKeys(trx)
      await createFlowLookups(trx)
      await checkForeignKeys(trx)
    })
  } finally {
    if (enforced) await sql`pragma foreign_keys = on`.execute(db)
  }
}

/**
 * `table` as it is now (whatever migrations before this one made of it), but with `keys` composite. Its definition is
 * read from the schema and each key column's inline `references` moved into a table constraint.
 */
async function rebuild(db: Kysely<unknown>, table: string, keys: readonly TenantForeignKey[]): Promise<void> {
  const { rows } = await sql<{ type: string; definition: string }>`
    select type, sql as definition from sqlite_master where tbl_name = ${table} and sql is not null`.execute(db)
  let definition = rows.find((row) => row.type === 'table')?.definition ?? ''
  for (const key of keys) {
    const inline = new RegExp(`("${key.column}" [^,]*?) references "${key.parent}" \\("id"\\) on delete cascade`)
    if (!inline.test(definition)) throw new Error(`${table}.${key.column} has no foreign key to ${key.parent}.id to make composite`)
    definition = definition.replace(inline, '$1')
  }
  const rebuilt = `${table}_rebuilt`
  definition = definition
    .replace(new RegExp(`^create table "${table}"`, 'i'), `create table "${rebuilt}"`)
    .replace(/\)\s*$/, `, ${keys.map(foreignKeyConstraint).join(', ')})`)
  await sql.raw(definition).execute(db)
  await sql.raw(`insert into "${rebuilt}" select * from "${table}"`).execute(db)
  await sql.raw(`drop table "${table}"`).execute(db)
  await sql.raw(`alter table "${rebuilt}" rename to "${table}"`).execute(db)
  for (const index of rows.filter((row) => row.type === 'index')) await sql.raw(index.definition).execute(db)
}

/** Fails the migration (its transaction rolls back) on a row whose key finds no parent: one of another account's. */
async function checkForeignKeys(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ table: string; rowid: number; parent: string }>`pragma foreign_key_check`.execute(db)
  if (rows.length > 0) {
    const found = rows.map((row) => `${row.table} row ${row.rowid} (refers to ${row.parent})`).join(', ')
    throw new Error(`rows refer to another account's rows, or to none: ${found}`)
  }
}
