import { type Kysely, sql } from 'kysely'
import type { DB } from '../../src/platform/storage/schema.js'

/**
 * Rows written with raw SQL, below Herald's stores, to test what the schema itself allows. An account's rows have ids
 * made from its own (`cli_{account}`, `ep_{account}`, …), so a row can be pointed at another account's by name.
 */

/** An account with a client, a webhook endpoint, an authorization flow and a browser session. */
export async function insertAccountParents(db: Kysely<DB>, account: string): Promise<void> {
  await sql`insert into accounts (id, name, status, admin_client_id, created_at, updated_at) values (${account}, ${account}, 'active', ${`cli_${account}`}, 1, 1)`.execute(db)
  await sql`insert into clients (id, account_id, name, kind, token_endpoint_auth_method, grant_types, scope, metadata, credentials_changed_at, created_at, updated_at)
    values (${`cli_${account}`}, ${account}, 'app', 'standard', 'none', '["authorization_code"]', 'openid', '{}', 1, 1, 1)`.execute(db)
  await sql`insert into webhook_endpoints (id, account_id, url, description, status, metadata, max_in_flight, secret, created_at, updated_at)
    values (${`ep_${account}`}, ${account}, 'https://example.com/hook', '', 'active', '{}', 10, 'sealed', 1, 1)`.execute(db)
  await insertFlow(db, account, `flow_${account}`, account)
  await sql`insert into browser_sessions (id, account_id, subject, secret_hash, auth_time, amr, remembered, expires_at, created_at, updated_at)
    values (${`bs_${account}`}, ${account}, 'alice', 'digest', 1, '[]', 0, 9, 1, 1)`.execute(db)
}

async function insertFlow(db: Kysely<DB>, account: string, id: string, clientAccount: string): Promise<void> {
  await sql`insert into authorization_flows (id, account_id, client_id, stage, request, expires_at, created_at, updated_at)
    values (${id}, ${account}, ${`cli_${clientAccount}`}, 'redeemed', '{}', 9, 1, 1)`.execute(db)
}

/** A reference from one tenant table to another's row, and a row of `account` that makes it to `target`'s parent. */
export interface TenantReference {
  /** `table(columns) → parent(columns)`, as the catalog describes the foreign key. */
  key: string
  insert(db: Kysely<DB>, account: string, target: string): Promise<unknown>
  /** Its table came after the composite tenant keys (0008): databases from before them have no rows to keep. */
  createdLater?: true
}

/** Every reference between tenant tables that the schema enforces: each is a composite foreign key. */
export const TENANT_REFERENCES: readonly TenantReference[] = [
  {
    key: 'client_scopes(account_id, client_id) → clients(account_id, id)',
    insert: (db, account, target) => sql`insert into client_scopes (account_id, client_id, scope) values (${account}, ${`cli_${target}`}, 'openid')`.execute(db),
  },
  {
    key: 'webhook_subscriptions(account_id, endpoint_id) → webhook_endpoints(account_id, id)',
    insert: (db, account, target) =>
      sql`insert into webhook_subscriptions (id, account_id, endpoint_id, event_types, created_at) values (${`sub_${account}_${target}`}, ${account}, ${`ep_${target}`}, '["*"]', 1)`.execute(db),
  },
  {
    key: 'authorization_flows(account_id, client_id) → clients(account_id, id)',
    insert: (db, account, target) => insertFlow(db, account, `flow_${account}_${target}`, target),
  },
  {
    key: 'consents(account_id, client_id) → clients(account_id, id)',
    insert: (db, account, target) =>
      sql`insert into consents (account_id, subject, client_id, scope, audience, session, created_at, updated_at)
        values (${account}, 'alice', ${`cli_${target}`}, 'openid', '[]', '{}', 1, 1)`.execute(db),
  },
  {
    key: 'refresh_tokens(account_id, grant_id) → authorization_flows(account_id, id)',
    insert: (db, account, target) =>
      sql`insert into refresh_tokens (id, account_id, grant_id, client_id, token_hash, scope, idle_ttl, expires_at, absolute_expires_at, created_at)
        values (${`rt_${account}_${target}`}, ${account}, ${`flow_${target}`}, ${`cli_${account}`}, ${`hash_${account}_${target}`}, 'openid', 60, 9, 9, 1)`.execute(db),
  },
  {
    key: 'session_clients(account_id, session_id) → browser_sessions(account_id, id)',
    insert: (db, account, target) =>
      sql`insert into session_clients (account_id, session_id, client_id, created_at) values (${account}, ${`bs_${target}`}, ${`cli_${account}`}, 1)`.execute(db),
  },
  {
    key: 'session_clients(account_id, client_id) → clients(account_id, id)',
    insert: (db, account, target) =>
      sql`insert into session_clients (account_id, session_id, client_id, created_at) values (${account}, ${`bs_${account}`}, ${`cli_${target}`}, 1)`.execute(db),
  },
  {
    key: 'device_authorizations(account_id, client_id) → clients(account_id, id)',
    insert: (db, account, target) => insertDevice(db, account, `dev_${account}_${target}_c`, target, account),
    createdLater: true,
  },
  {
    key: 'device_authorizations(account_id, flow_id) → authorization_flows(account_id, id)',
    insert: (db, account, target) => insertDevice(db, account, `dev_${account}_${target}_f`, account, target),
    createdLater: true,
  },
  {
    key: 'client_registrations(account_id, client_id) → clients(account_id, id)',
    insert: (db, account, target) =>
      sql`insert into client_registrations (account_id, client_id, access_token_hash, initial_token_id, scope_ceiling, grant_types_ceiling, last_used_at, created_at)
        values (${account}, ${`cli_${target}`}, 'digest', null, '', '[]', 1, 1)`.execute(db),
    createdLater: true,
  },
]

async function insertDevice(db: Kysely<DB>, account: string, id: string, clientAccount: string, flowAccount: string): Promise<void> {
  await sql`insert into device_authorizations (id, account_id, client_id, device_code_hash, user_code_hash, scope, stage, interval, flow_id, expires_at, created_at, updated_at)
    values (${id}, ${account}, ${`cli_${clientAccount}`}, ${`dc_${id}`}, ${`uc_${id}`}, 'openid', 'verified', 5, ${`flow_${flowAccount}`}, 9, 1, 1)`.execute(db)
}

/** One row of `account` in each table that a tenant reference starts from (those the tenant keys made composite), pointing at the account's own rows. */
export async function insertReferencingRows(db: Kysely<DB>, account: string): Promise<void> {
  const done = new Set<string>()
  for (const reference of TENANT_REFERENCES) {
    if (reference.createdLater) continue
    if (done.has(referencingTable(reference))) continue
    done.add(referencingTable(reference))
    await reference.insert(db, account, account)
  }
}

export const referencingTable = (reference: TenantReference) => reference.key.split('(')[0]!

/** The account of every row of each table that a tenant reference starts from. */
export async function referencingRows(db: Kysely<DB>): Promise<Record<string, string[]>> {
  const accounts = async (table: string) => {
    const { rows } = await sql<{ account_id: string }>`select account_id from ${sql.table(table)} order by account_id`.execute(db)
    return rows.map((row) => row.account_id)
  }
  const tables = [...new Set(TENANT_REFERENCES.filter((reference) => !reference.createdLater).map(referencingTable))]
  return Object.fromEntries(await Promise.all(tables.map(async (table) => [table, await accounts(table)] as const)))
}

/**
 * The foreign keys whose parent is one of `tables`, as `table(columns) → parent(columns)`, read from the catalog: on
 * PostgreSQL from pg_constraint, on SQLite from each table's pragma_foreign_key_list.
 */
export async function foreignKeysTo(db: Kysely<DB>, dialect: 'sqlite' | 'postgres', tables: ReadonlySet<string>): Promise<string[]> {
  const { rows } =
    dialect === 'postgres'
      ? await sql<{ table: string; parent: string; columns: string[]; references: string[] }>`
          select c.conrelid::regclass::text as table, c.confrelid::regclass::text as parent,
            array(select a.attname::text from unnest(c.conkey) with ordinality k(n, i) join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.n order by k.i) as columns,
            array(select a.attname::text from unnest(c.confkey) with ordinality k(n, i) join pg_attribute a on a.attrelid = c.confrelid and a.attnum = k.n order by k.i) as references
          from pg_constraint c join pg_namespace n on n.oid = c.connamespace
          where c.contype = 'f' and n.nspname = current_schema()`.execute(db)
      : await sql<{ table: string; parent: string; columns: string; references: string }>`
          select m.name as "table", f."table" as parent, json_group_array(f."from") as columns, json_group_array(f."to") as "references"
          from sqlite_master as m, pragma_foreign_key_list(m.name) as f where m.type = 'table'
          group by m.name, f.id order by m.name, f.id`.execute(db)
  const list = (value: string | string[]) => (typeof value === 'string' ? (JSON.parse(value) as string[]) : value).join(', ')
  return rows.filter((row) => tables.has(row.parent)).map((row) => `${row.table}(${list(row.columns)}) → ${row.parent}(${list(row.references)})`)
}
