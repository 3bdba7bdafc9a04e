import { type Kysely, sql } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type Database, openDatabase } from '../../src/platform/storage/database.js'
import { createTestDatabase, requestedDialects, type TestDatabase } from '../support/dialects.js'

/** The statements the connection `db` is pinned to has prepared, by text. */
async function prepared(db: Kysely<unknown>): Promise<string[]> {
  const { rows } = await sql<{ statement: string }>`select statement from pg_prepared_statements order by statement`.execute(db)
  return rows.map((row) => row.statement)
}

describe.runIf(requestedDialects().includes('postgres'))('PostgreSQL named prepared statements', () => {
  let testDatabase: TestDatabase
  let database: Database | undefined

  beforeEach(async () => {
    testDatabase = await createTestDatabase('postgres')
  })
  afterEach(async () => {
    await database?.close()
    database = undefined
    await testDatabase.drop()
  })

  function open(preparedStatements?: boolean): Kysely<unknown> {
    if (testDatabase.config.dialect !== 'postgres') throw new Error('a PostgreSQL database was expected')
    database = openDatabase({ ...testDatabase.config, ...(preparedStatements !== undefined && { preparedStatements }) })
    return database.db as unknown as Kysely<unknown>
  }

  it('prepares a statement with parameters once per connection and reuses it, planned for each run; one without parameters is not named', async () => {
    const db = open()
    await db.connection().execute(async (connection) => {
      for (let i = 0; i < 3; i++) expect((await sql<{ n: number }>`select ${i}::int as n`.execute(connection)).rows).toEqual([{ n: i }])
      await sql`select 1`.execute(connection)
      expect(await prepared(connection)).toEqual(['select $1::int as n'])
      // Planned for each run, as an unnamed statement is: a plan kept from when a table was small would outlive it.
      expect((await sql<{ plan_cache_mode: string }>`show plan_cache_mode`.execute(connection)).rows).toEqual([{ plan_cache_mode: 'force_custom_plan' }])
    })
  })

  it('prepares nothing with preparedStatements: false (PgBouncer in transaction mode)', async () => {
    const db = open(false)
    await db.connection().execute(async (connection) => {
      await sql`select ${1}::int as n`.execute(connection)
      expect(await prepared(connection)).toEqual([])
      expect((await sql<{ plan_cache_mode: string }>`show plan_cache_mode`.execute(connection)).rows).toEqual([{ plan_cache_mode: 'auto' }])
    })
  })

  it('runs a statement again when a migration changed the columns it returns, outside a transaction', async () => {
    const db = open()
    await sql`create table things (id text primary key)`.execute(db)
    await sql`insert into things values ('a')`.execute(db)
    await db.connection().execute(async (connection) => {
      const read = () => sql`select * from things where id = ${'a'}`.execute(connection)
      expect((await read()).rows).toEqual([{ id: 'a' }])
      // Another process migrates meanwhile.
      await sql`alter table things add column label text`.execute(db)
      expect((await read()).rows).toEqual([{ id: 'a', label: null }])
      expect((await read()).rows).toEqual([{ id: 'a', label: null }])
    })
  })

  it('fails a transaction whose statement was prepared before such a migration, and the next one prepares it anew', async () => {
    const db = open()
    await sql`create table things (id text primary key)`.execute(db)
    await sql`insert into things values ('a')`.execute(db)
    // One query at a time: the pool's one connection runs them all.
    const read = (on: Kysely<unknown>) => sql`select * from things where id = ${'a'}`.execute(on)
    await read(db)
    await sql`alter table things add column label text`.execute(db)
    await expect(db.transaction().execute(read)).rejects.toThrow(/cached plan must not change result type/)
    expect((await db.transaction().execute(read)).rows).toEqual([{ id: 'a', label: null }])
  })
})
