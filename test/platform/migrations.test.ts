import { type Kysely, Migrator, sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { DEFAULT_SETTINGS } from '../../src/platform/settings/settings.js'
import { migrateToLatest } from '../../src/platform/storage/migrate.js'
import { migrations } from '../../src/platform/storage/migrations/index.js'
import { openDatabase } from '../../src/platform/storage/database.js'
import type { DB } from '../../src/platform/storage/schema.js'
import { createTestDatabase } from '../support/dialects.js'
import { forEachDialect } from '../support/herald.js'

forEachDialect((dialect) => {
  describe('upgrading a database', () => {
    it('brings a 0001 database with data to the latest schema: webhook settings get their defaults, old events need no fan-out', async () => {
      const database = await createTestDatabase(dialect)
      const { db, close } = openDatabase(database.config)
      try {
        const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, migrationTableName: 'herald_migrations', migrationLockTableName: 'herald_migrations_lock' })
        expect((await migrator.migrateTo('0001-platform')).error).toBeUndefined()
        await sql`insert into accounts (id, name, status, admin_client_id, created_at, updated_at) values ('acct_1', 'old', 'active', 'cli_1', 1, 1)`.execute(db)
        await sql`insert into account_settings (account_id, access_token_ttl, refresh_token_idle_ttl, refresh_token_absolute_ttl, id_token_ttl, authorization_code_ttl, default_audience, access_token_signing_alg, updated_at)
          values ('acct_1', 600, 86400, 864000, 600, 60, null, 'ES256', 1)`.execute(db)
        await sql`insert into events (id, account_id, type, data, created_at) values ('evt_1', 'acct_1', 'oauth.client.created', '{}', 5)`.execute(db)

        expect((await migrateToLatest(db)).applied).toEqual(Object.keys(migrations).filter((name) => name !== '0001-platform'))

        const settings = await db.selectFrom('account_settings').selectAll().executeTakeFirstOrThrow()
        expect(settings.access_token_ttl).toBe(600)
        expect(JSON.parse(settings.webhook_retry_schedule)).toEqual(DEFAULT_SETTINGS.webhook_retry_schedule)
        expect(settings.webhook_retention_days).toBe(DEFAULT_SETTINGS.webhook_retention_days)
        expect(settings.webhook_disable_after).toBe(DEFAULT_SETTINGS.webhook_disable_after)
        const event = await db.selectFrom('events').selectAll().executeTakeFirstOrThrow()
        expect(event.fanned_out_at).toBe(5)
      } finally {
        await close()
        await database.drop()
      }
    })
  })

  describe('the latest schema', () => {
    /** Runs `check` on a new database migrated to the latest schema. */
    async function onLatestSchema(check: (db: Kysely<DB>) => Promise<void>): Promise<void> {
      const database = await createTestDatabase(dialect)
      const { db, close } = openDatabase(database.config)
      try {
        await migrateToLatest(db)
        await check(db)
      } finally {
        await close()
        await database.drop()
      }
    }

    it('compares every indexed text column byte by byte, whatever the database collation', async () => {
      await onLatestSchema(async (db) => {
        const { rows } =
          dialect === 'postgres'
            ? await sql<{ name: string; collation: string }>`
                select t.relname || '.' || a.attname as name, coalesce(c.collname, '(default)') as collation
                from pg_index i
                join pg_class t on t.oid = i.indrelid
                join pg_namespace n on n.oid = t.relnamespace and n.nspname = current_schema()
                cross join lateral unnest(i.indkey::int2[], i.indcollation::oid[]) as k(attnum, coll)
                join pg_attribute a on a.attrelid = t.oid and a.attnum = k.attnum
                left join pg_collation c on c.oid = k.coll
                where a.atttypid = 'text'::regtype and t.relname not like 'herald_migrations%'`.execute(db)
            : await sql<{ name: string; collation: string }>`
                select m.name || '.' || x.name as name, x.coll as collation
                from sqlite_master as l join sqlite_master as m on m.name = l.tbl_name, pragma_index_xinfo(l.name) as x
                where l.type = 'index' and x.key = 1 and x.name is not null and m.name not like 'herald_migrations%'`.execute(db)

        expect(rows.length).toBeGreaterThan(40)
        expect(rows.filter((row) => row.collation !== (dialect === 'postgres' ? 'C' : 'BINARY'))).toEqual([])
      })
    })

    it('deletes the attempts of an account that is deleted, with its deliveries', async () => {
      await onLatestSchema(async (db) => {
        const account = async (id: string) => {
          await sql`insert into accounts (id, name, status, admin_client_id, created_at, updated_at) values (${id}, ${id}, 'active', ${`cli_${id}`}, 1, 1)`.execute(db)
          await sql`insert into webhook_deliveries (id, account_id, event_id, event_type, endpoint_id, status, attempt_count, created_at)
            values (${`dlv_${id}`}, ${id}, 'evt_1', 'order.paid', 'ep_1', 'succeeded', 1, 1)`.execute(db)
          await sql`insert into webhook_attempts (delivery_id, number, account_id, started_at, response_status) values (${`dlv_${id}`}, 1, ${id}, 1, 204)`.execute(db)
        }
        await account('acct_gone')
        await account('acct_kept')

        await sql`delete from accounts where id = 'acct_gone'`.execute(db)

        expect(await db.selectFrom('webhook_deliveries').select('id').execute()).toEqual([{ id: 'dlv_acct_kept' }])
        expect(await db.selectFrom('webhook_attempts').select('delivery_id').execute()).toEqual([{ delivery_id: 'dlv_acct_kept' }])
      })
    })

    it.runIf(dialect === 'postgres')('writes an attempt without a foreign-key check of its account, which its delivery has', async () => {
      await onLatestSchema(async (db) => {
        const { rows } = await sql<{ conname: string }>`
          select conname from pg_constraint where conrelid = cast('webhook_attempts' as regclass) and contype = 'f'`.execute(db)
        expect(rows).toEqual([])
      })
    })

    it.runIf(dialect === 'postgres')('leaves room on each new page of deliveries for the leases of all its rows, as HOT updates', async () => {
      await onLatestSchema(async (db) => {
        const { rows } = await sql<{ reloptions: string[] | null }>`
          select c.reloptions from pg_class c join pg_namespace n on n.oid = c.relnamespace and n.nspname = current_schema()
          where c.relname = 'webhook_deliveries'`.execute(db)
        expect(rows).toEqual([{ reloptions: ['fillfactor=45'] }])
      })
    })
  })
})
