import { fileURLToPath } from 'node:url'
import { type Kysely, type Migration, Migrator, sql } from 'kysely'
import { describe, expect, inject, it } from 'vitest'
import { DEFAULT_SETTINGS } from '../../src/platform/settings/settings.js'
import { migrateToLatest } from '../../src/platform/storage/migrate.js'
import { BASELINE, MIGRATION_TABLE, migrationsFor } from '../../src/platform/storage/migrations/index.js'
import { type Database, openDatabase } from '../../src/platform/storage/database.js'
import { PRE_BASELINE_MIGRATIONS } from '../../src/platform/storage/pre-baseline.js'
import { type DB, INDEXES } from '../../src/platform/storage/schema.js'
import { preBaselineMigrations } from '../fixtures/pre-baseline-migrations/index.js'
import { createTestDatabase, type DialectName, type TestDatabase } from '../support/dialects.js'
import { forEachDialect, startHerald } from '../support/herald.js'
import { createAccount, managementToken } from '../support/http.js'
import { declaredTables, describeSchema, type SchemaDescription } from '../support/schema.js'
import { insertAccountParents, insertReferencingRows, referencingRows } from '../support/tenant-rows.js'

/** The migrations released after the baseline: a database adopted at the baseline runs them next. */
const AFTER_BASELINE = Object.keys(migrationsFor('sqlite')).filter((name) => name !== BASELINE)
const ALL_MIGRATIONS = [BASELINE, ...AFTER_BASELINE]

const SCHEMA_FILE = fileURLToPath(new URL('../../src/platform/storage/schema.ts', import.meta.url))

/** What PostgreSQL alone has: the change log's transaction ids, which only raw SQL reads (see ChangeFeed). */
const POSTGRES_ONLY = { columns: ['cache_changes.txid'], indexes: ['cache_changes_txid_idx'] }

/** Runs `use` on a new, empty database, then closes and drops it. */
async function withDatabase<T>(dialect: DialectName, use: (database: Database, test: TestDatabase) => Promise<T>): Promise<T> {
  const test = await createTestDatabase(dialect)
  const database = openDatabase(test.config)
  try {
    return await use(database, test)
  } finally {
    await database.close()
    await test.drop()
  }
}

/** A migrator of `migrations` that records them where Herald's does, to migrate part of the way. */
function migratorOf(db: Kysely<DB>, migrations: Record<string, Migration>): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => migrations }, migrationTableName: MIGRATION_TABLE, migrationLockTableName: 'herald_migrations_lock' })
}

/** The migrator of development builds before the baseline, with their migrations as they were. */
const preBaselineMigrator = (db: Kysely<DB>) => migratorOf(db, preBaselineMigrations)

async function recordedMigrations(db: Kysely<DB>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from ${sql.table(MIGRATION_TABLE)} order by name`.execute(db)
  return rows.map((row) => row.name)
}

async function freshSchema(dialect: DialectName): Promise<SchemaDescription> {
  return withDatabase(dialect, async (database) => {
    await migrateToLatest(database)
    return describeSchema(database.db, dialect)
  })
}

/**
 * What the application sees of a schema: tables, their columns (names, sorted, and nullability), primary keys and
 * indexes (key columns). SQLite lets a primary key that is not an integer hold null unless declared not null (a
 * known quirk it keeps for compatibility); Herald never writes one, so a key column counts as not nullable.
 */
function logicalSchema(schema: SchemaDescription) {
  return Object.fromEntries(
    Object.entries(schema.tables).map(([table, { columns, primaryKey, indexes }]) => [
      table,
      {
        columns: columns.map(({ name, nullable }) => ({ name, nullable: nullable && !primaryKey.includes(name) })).sort((a, b) => a.name.localeCompare(b.name)),
        primaryKey,
        indexes: Object.fromEntries(Object.entries(indexes).map(([name, index]) => [name, index.columns])),
      },
    ]),
  )
}

/** The logical schema without what only PostgreSQL has. */
function portableSchema(schema: SchemaDescription) {
  const logical = logicalSchema(schema)
  for (const [table, described] of Object.entries(logical)) {
    described.columns = described.columns.filter((column) => !POSTGRES_ONLY.columns.includes(`${table}.${column.name}`))
    for (const index of POSTGRES_ONLY.indexes) delete described.indexes[index]
  }
  return logical
}

forEachDialect((dialect) => {
  describe('a development database, migrated before the baseline', () => {
    it('brings a 0001 database with data to the latest schema: webhook settings get their defaults, old events need no fan-out', async () => {
      await withDatabase(dialect, async (database) => {
        const { db } = database
        const migrator = preBaselineMigrator(db)
        expect((await migrator.migrateTo('0001-platform')).error).toBeUndefined()
        await sql`insert into accounts (id, name, status, admin_client_id, created_at, updated_at) values ('acct_1', 'old', 'active', 'cli_1', 1, 1)`.execute(db)
        await sql`insert into account_settings (account_id, access_token_ttl, refresh_token_idle_ttl, refresh_token_absolute_ttl, id_token_ttl, authorization_code_ttl, default_audience, access_token_signing_alg, updated_at)
          values ('acct_1', 600, 86400, 864000, 600, 60, null, 'ES256', 1)`.execute(db)
        await sql`insert into events (id, account_id, type, data, created_at) values ('evt_1', 'acct_1', 'oauth.client.created', '{}', 5)`.execute(db)

        const { results = [] } = await migrator.migrateToLatest()
        expect(results.filter((result) => result.status === 'Success').map((result) => result.migrationName)).toEqual(Object.keys(preBaselineMigrations).filter((name) => name !== '0001-platform'))
        expect(await migrateToLatest(database)).toEqual({ applied: AFTER_BASELINE, adoptedPreBaseline: true })

        const settings = await db.selectFrom('account_settings').selectAll().executeTakeFirstOrThrow()
        expect(settings.access_token_ttl).toBe(600)
        expect(JSON.parse(settings.webhook_retry_schedule)).toEqual(DEFAULT_SETTINGS.webhook_retry_schedule)
        expect(settings.webhook_retention_days).toBe(DEFAULT_SETTINGS.webhook_retention_days)
        expect(settings.webhook_disable_after).toBe(DEFAULT_SETTINGS.webhook_disable_after)
        const event = await db.selectFrom('events').selectAll().executeTakeFirstOrThrow()
        expect(event.fanned_out_at).toBe(5)
      })
    })

    it('is recorded as at the baseline, once, and has the schema of a new database', async () => {
      expect(Object.keys(preBaselineMigrations)).toEqual(PRE_BASELINE_MIGRATIONS)
      const schema = await withDatabase(dialect, async (database) => {
        expect((await preBaselineMigrator(database.db).migrateToLatest()).error).toBeUndefined()

        expect(await migrateToLatest(database)).toEqual({ applied: AFTER_BASELINE, adoptedPreBaseline: true })
        expect(await recordedMigrations(database.db)).toEqual(ALL_MIGRATIONS)
        expect(await migrateToLatest(database)).toEqual({ applied: [], adoptedPreBaseline: false })
        return describeSchema(database.db, dialect)
      })
      expect(schema).toEqual(await freshSchema(dialect))
    })

    it.runIf(dialect === 'postgres')('is recorded once when several processes start on it at once', async () => {
      await withDatabase(dialect, async (database, test) => {
        expect((await preBaselineMigrator(database.db).migrateToLatest()).error).toBeUndefined()
        const instances = Array.from({ length: 4 }, () => openDatabase(test.config))
        try {
          const outcomes = await Promise.all(instances.map((instance) => migrateToLatest(instance)))
          expect(outcomes.filter((outcome) => outcome.adoptedPreBaseline)).toHaveLength(1)
          expect(outcomes.flatMap((outcome) => outcome.applied)).toEqual(AFTER_BASELINE)
        } finally {
          await Promise.all(instances.map((instance) => instance.close()))
        }
        expect(await recordedMigrations(database.db)).toEqual(ALL_MIGRATIONS)
      })
    })

    it('serves after Herald starts on it', async () => {
      const database = await createTestDatabase(dialect)
      const prepared = openDatabase(database.config)
      try {
        expect((await preBaselineMigrator(prepared.db).migrateToLatest()).error).toBeUndefined()
      } finally {
        await prepared.close()
      }
      const h = await startHerald(dialect, { database })
      try {
        const account = await createAccount(h)
        expect(await managementToken(account)).toMatch(/^ey/)
        expect(await recordedMigrations(h.herald.database.db)).toEqual(ALL_MIGRATIONS)
        expect(h.logs.join('')).toContain(`recorded the migrations of a development build as ${BASELINE}`)
      } finally {
        await h.close()
      }
    })

    it('is refused, as it was, when it ran only some of those migrations', async () => {
      await withDatabase(dialect, async (database) => {
        expect((await preBaselineMigrator(database.db).migrateTo('0005-held-deliveries')).error).toBeUndefined()
        const before = await describeSchema(database.db, dialect)

        await expect(migrateToLatest(database)).rejects.toThrow(
          /predates the 0001-baseline migration, and lacks 0006-listing-indexes, .*, 0013-cache-changes\. Migrate it with a development build that has them all/,
        )

        expect(await recordedMigrations(database.db)).toEqual(Object.keys(preBaselineMigrations).slice(0, 5))
        expect(await describeSchema(database.db, dialect)).toEqual(before)
      })
    })
  })

  describe('a database from before the composite tenant keys', () => {
    const BEFORE_TENANT_KEYS = '0007-endpoint-stats'

    /** Runs `use` on a new database migrated as far as `BEFORE_TENANT_KEYS`, with two accounts' rows. */
    async function withRowsFromBefore(use: (database: Database) => Promise<void>): Promise<void> {
      await withDatabase(dialect, async (database) => {
        expect((await migratorOf(database.db, migrationsFor(dialect)).migrateTo(BEFORE_TENANT_KEYS)).error).toBeUndefined()
        for (const account of ['acct_a', 'acct_b']) {
          await insertAccountParents(database.db, account)
          await insertReferencingRows(database.db, account)
        }
        await use(database)
      })
    }

    it('keeps its rows, and deleting a parent still deletes the rows that refer to it', async () => {
      await withRowsFromBefore(async (database) => {
        const { db } = database
        const before = await referencingRows(db)
        expect(Object.values(before).every((accounts) => accounts.includes('acct_a') && accounts.includes('acct_b'))).toBe(true)

        expect(await migrateToLatest(database)).toMatchObject({ applied: ALL_MIGRATIONS.slice(ALL_MIGRATIONS.indexOf(BEFORE_TENANT_KEYS) + 1) })
        expect(await referencingRows(db)).toEqual(before)

        await sql`delete from clients where id = 'cli_acct_a'`.execute(db)
        await sql`delete from webhook_endpoints where id = 'ep_acct_a'`.execute(db)
        await sql`delete from browser_sessions where id = 'bs_acct_a'`.execute(db)
        const ofB = Object.fromEntries(Object.entries(before).map(([table, accounts]) => [table, accounts.filter((account) => account === 'acct_b')]))
        expect(await referencingRows(db)).toEqual(ofB)
      })
    })

    it("is refused, and leaves the database as it was, when a row points at another account's row", async () => {
      await withRowsFromBefore(async (database) => {
        const { db } = database
        await sql`insert into consents (account_id, subject, client_id, scope, audience, session, created_at, updated_at)
          values ('acct_b', 'mallory', 'cli_acct_a', 'openid', '[]', '{}', 1, 1)`.execute(db)
        const before = await describeSchema(db, dialect)

        await expect(migrateToLatest(database)).rejects.toThrow(/^migration 0008-tenant-keys failed: .*(consents|foreign key)/)

        expect(await describeSchema(db, dialect)).toEqual(before)
        expect(await recordedMigrations(db)).toEqual(ALL_MIGRATIONS.slice(0, ALL_MIGRATIONS.indexOf(BEFORE_TENANT_KEYS) + 1))
        if (dialect === 'sqlite') expect((await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(db)).rows).toEqual([{ foreign_keys: 1 }])
      })
    })
  })

  describe('the latest schema', () => {
    /** Runs `check` on a new database migrated to the latest schema. */
    async function onLatestSchema(check: (db: Kysely<DB>) => Promise<void>): Promise<void> {
      const database = await createTestDatabase(dialect)
      const opened = openDatabase(database.config)
      try {
        await migrateToLatest(opened)
        await check(opened.db)
      } finally {
        await opened.close()
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

    it('has the tables and columns that schema.ts declares, with their nullability, and the indexes it lists', async () => {
      const portable = portableSchema(await freshSchema(dialect))
      const declared = declaredTables(SCHEMA_FILE, 'DB')

      expect(Object.keys(portable).sort()).toEqual(Object.keys(declared).sort())
      for (const [table, columns] of Object.entries(declared)) {
        expect({ table, columns: portable[table]?.columns }).toEqual({ table, columns: [...columns].sort((a, b) => a.name.localeCompare(b.name)) })
      }
      expect(Object.fromEntries(Object.entries(portable).map(([table, { indexes }]) => [table, indexes]))).toEqual(INDEXES)
    })
  })
})

describe.runIf(inject('dialects').length === 2)('the schemas of the two dialects', () => {
  it('have the same tables, columns, primary keys and indexes, but for what PostgreSQL alone has', async () => {
    const [sqlite, postgres] = await Promise.all([freshSchema('sqlite'), freshSchema('postgres')])
    expect(portableSchema(sqlite)).toEqual(portableSchema(postgres))
    const postgresOnly = logicalSchema(postgres).cache_changes
    expect(postgresOnly?.columns).toContainEqual({ name: 'txid', nullable: false })
    expect(postgresOnly?.indexes).toMatchObject({ cache_changes_txid_idx: ['txid'] })
  })
})
