import type { Kysely } from 'kysely'

/**
 * A tenant table's reference to another tenant table's row, made composite: `(account_id, column)` refers to the
 * parent's `(account_id, id)`, so no row can point at another account's row (as Hydra keys its tables on `(nid, id)`).
 * Every one deletes with its parent, as the single-column key it replaces did.
 */
export interface TenantForeignKey {
  table: string
  column: string
  parent: string
}

export const TENANT_FOREIGN_KEYS: readonly TenantForeignKey[] = [
  { table: 'client_scopes', column: 'client_id', parent: 'clients' },
  { table: 'webhook_subscriptions', column: 'endpoint_id', parent: 'webhook_endpoints' },
  { table: 'authorization_flows', column: 'client_id', parent: 'clients' },
  { table: 'consents', column: 'client_id', parent: 'clients' },
  { table: 'refresh_tokens', column: 'grant_id', parent: 'authorization_flows' },
  { table: 'session_clients', column: 'session_id', parent: 'browser_sessions' },
  { table: 'session_clients', column: 'client_id', parent: 'clients' },
]

/** The name PostgreSQL would give the composite key: `{table}_account_id_{column}_fkey`. */
const foreignKeyName = ({ table, column }: TenantForeignKey) => `${table}_account_id_${column}_fkey`

/** The composite key as a table constraint. */
export const foreignKeyConstraint = (key: TenantForeignKey) =>
  `constraint "${foreignKeyName(key)}" foreign key ("account_id", "${key.column}") references "${key.parent}" ("account_id", "id") on delete cascade`

/**
 * A foreign key needs a unique key on what it refers to. `clients` and `webhook_endpoints` already had an index on
 * `(account_id, id)`, which becomes unique; the sign-in tables get one.
 */
export async function createParentKeys(db: Kysely<unknown>): Promise<void> {
  for (const table of ['clients', 'webhook_endpoints']) {
    await db.schema.dropIndex(`${table}_account_idx`).execute()
    await db.schema.createIndex(`${table}_account_idx`).unique().on(table).columns(['account_id', 'id']).execute()
  }
  for (const table of ['authorization_flows', 'browser_sessions']) {
    await db.schema.createIndex(`${table}_account_idx`).unique().on(table).columns(['account_id', 'id']).execute()
  }
}

/**
 * Ending a session, or revoking a consent, closes the flows under way on it and revokes the grants made under it, in
 * its transaction: found by session or subject, not by a scan of the account's flows, which grants keep for months.
 */
export async function createFlowLookups(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('authorization_flows_subject_idx').on('authorization_flows').columns(['account_id', 'subject']).execute()
  await db.schema.createIndex('authorization_flows_session_idx').on('authorization_flows').columns(['account_id', 'session_id']).execute()
}

/** The tables that hold the keys, each with its keys. */
export function keysByTable(): Map<string, TenantForeignKey[]> {
  const tables = new Map<string, TenantForeignKey[]>()
  for (const key of TENANT_FOREIGN_KEYS) tables.set(key.table, [...(tables.get(key.table) ?? []), key])
  return tables
}
