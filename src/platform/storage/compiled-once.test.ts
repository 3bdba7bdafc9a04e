import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import { describe, expect, it } from 'vitest'
import { CompiledOnce } from './compiled-once.js'

interface Items {
  items: { account_id: string; id: string; name: string }
}

function itemsDatabase(): Kysely<Items> {
  const connection = new SQLite(':memory:')
  connection.exec(`create table items (account_id text, id text, name text);
    insert into items values ('a', '1', 'one'), ('a', '2', 'two'), ('b', '1', 'other'), ('a', '3', 'hidden')`)
  return new Kysely<Items>({ dialect: new SqliteDialect({ database: connection }) })
}

describe('CompiledOnce', () => {
  it('builds once, then runs with each call\'s values in their slots and the constants kept', async () => {
    const db = itemsDatabase()
    let builds = 0
    const byId = new CompiledOnce(db, ['accountId', 'id'], ({ accountId, id }) => {
      builds++
      return db.selectFrom('items').select('name').where('account_id', '=', accountId).where('name', '!=', 'hidden').where('id', '=', id)
    })
    expect(await byId.execute({ accountId: 'a', id: '2' })).toEqual([{ name: 'two' }])
    expect(await byId.execute({ accountId: 'b', id: '1' })).toEqual([{ name: 'other' }])
    expect(await byId.execute({ accountId: 'a', id: '3' }), 'the constant still applies').toEqual([])
    expect(builds).toBe(1)
    await db.destroy()
  })

  it('refuses a query that does not bind every value as a parameter', async () => {
    const db = itemsDatabase()
    const careless = new CompiledOnce(db, ['accountId', 'id'], ({ accountId }) => db.selectFrom('items').select('name').where('account_id', '=', accountId))
    await expect(careless.execute({ accountId: 'a', id: '1' })).rejects.toThrow(/id not bound/)
    await db.destroy()
  })
})
