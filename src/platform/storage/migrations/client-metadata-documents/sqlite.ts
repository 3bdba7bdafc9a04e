import { type Kysely, sql } from 'kysely'
import { addSetting } from './tables.js'

/**
 * The key of `clients` becomes `(account_id, id)` (see postgres.ts). SQLite can't alter a primary key: the table is
 * rebuilt by the procedure of https://www.sqlite.org/lang_altertable.html#otheralter, with foreign keys off so that
 * dropping the old table deletes none of the rows that refer to it; `foreign_key_check` proves them all before the
 * transaction commits.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(db)
  const enforced = rows[0]?.foreign_keys === 1
  // A no-op inside a transaction: Kysely runs SQLite's migrations outside one, so it takes effect here.
  await sql`pragma foreign_keys = off`.execute(db)
  try {
    await db.transaction().execute(async (trx) => {
      await addSetting(trx)
      await rekeyClients(trx)
      const { rows: broken } = await sql`pragma foreign_key_check`.execute(trx)
      if (broken.length > 0) throw new Error(`rows refer to no client after rebuilding clients: ${JSON.stringify(broken)}`)
    })
  } finally {
    if (enforced) await sql`pragma foreign_keys = on`.execute(db)
  }
}

async function rekeyClients(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ type: string; definition: string }>`
    select type, sql as definition from sqlite_master where tbl_name = 'clients' and sql is not null`.execute(db)
  const definition = rows.find((row) => row.type === 'table')?.definition ?? ''
  const singleKey = /"id" text primary key/i
  if (!singleKey.test(definition)) throw new Error('clients has no single-column primary key to make composite')
  const rebuilt = definition
    .replace(/^create table "clients"/i, 'create table "clients_rebuilt"')
    .replace(singleKey, '"id" text not null')
    .replace(/\)\s*$/, ', primary key ("account_id", "id"))')
  await sql.raw(rebuilt).execute(db)
  await sql`insert into clients_rebuilt select * from clients`.execute(db)
  await sql`drop table clients`.execute(db)
  await sql`alter table clients_rebuilt rename to clients`.execute(db)
  for (const index of rows.filter((row) => row.type === 'index')) await sql.raw(index.definition).execute(db)
}
