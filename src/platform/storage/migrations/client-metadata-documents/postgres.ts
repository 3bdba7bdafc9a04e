import { type Kysely, sql } from 'kysely'
import { addSetting } from './tables.js'

/**
 * A client named by the URL of its metadata document is a client of each account that resolves it, one row per
 * account: the key of `clients` becomes `(account_id, id)`. Every foreign key to `clients` is composite already
 * (0007), on the unique index `clients_account_idx`, so nothing depends on the single-column key.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await addSetting(db)
  await sql`alter table clients drop constraint clients_pkey`.execute(db)
  await sql`alter table clients add constraint clients_pkey primary key (account_id, id)`.execute(db)
}
