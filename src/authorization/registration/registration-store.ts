import { type Kysely, sql } from 'kysely'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { ClientRegistrationsTable, DB } from '../../platform/storage/schema.js'
import type { Tx } from '../../platform/storage/transaction.js'
import type { GrantType } from '../clients/client-metadata.js'
import type { RegistrationCeiling } from './registration-policy.js'

/** A registered client's registration: what RFC 7592's requests are checked against. */
export interface ClientRegistration {
  clientId: string
  accessTokenHash: string
  ceiling: RegistrationCeiling
}

const DAY_MS = 24 * 3600 * 1000

/** The rows of client_registrations, one per client made by RFC 7591 registration; each goes with its client. */
export class RegistrationStore {
  constructor(private readonly db: Kysely<DB>) {}

  async insert(tx: Tx, accountId: string, row: Omit<ClientRegistrationsTable, 'account_id' | 'scope_ceiling' | 'grant_types_ceiling'>, ceiling: RegistrationCeiling): Promise<void> {
    await forAccount(tx.db, accountId)
      .insertInto('client_registrations', { ...row, scope_ceiling: ceiling.scopes.join(' '), grant_types_ceiling: JSON.stringify(ceiling.grantTypes) })
      .execute()
  }

  async read(db: Kysely<DB>, accountId: string, clientId: string): Promise<ClientRegistration | undefined> {
    const row = await forAccount(db, accountId).selectFrom('client_registrations').selectAll().where('client_id', '=', clientId).executeTakeFirst()
    return (
      row && {
        clientId: row.client_id,
        accessTokenHash: row.access_token_hash,
        ceiling: { scopes: row.scope_ceiling.split(' ').filter(Boolean), grantTypes: JSON.parse(row.grant_types_ceiling) as GrantType[] },
      }
    )
  }

  /** How many registered clients the account holds; the registration's transaction holds the lock that makes it exact. */
  async count(tx: Tx, accountId: string): Promise<number> {
    const row = await forAccount(tx.db, accountId).selectFrom('client_registrations').select((eb) => eb.fn.countAll<number | string | bigint>().as('n')).executeTakeFirst()
    return Number(row?.n ?? 0)
  }

  /** Moves the client's last use to `now` unless it already lies within the day before: one write a day at most. */
  async noteUse(accountId: string, clientId: string, now: number): Promise<void> {
    await forAccount(this.db, accountId)
      .updateTable('client_registrations')
      .set({ last_used_at: now })
      .where('client_id', '=', clientId)
      .where('last_used_at', '<', now - DAY_MS)
      .execute()
  }

  /**
   * Housekeeping across every account, not a tenant's query: registered clients of accounts that prune them, unused
   * for longer than the account allows, oldest first, at most `limit`.
   */
  async unused(now: number, limit: number): Promise<Array<{ accountId: string; clientId: string }>> {
    const rows = await this.db
      .selectFrom('client_registrations as r')
      .innerJoin('account_settings as s', 's.account_id', 'r.account_id')
      .select(['r.account_id', 'r.client_id'])
      .where('s.registration_prune_after_days', 'is not', null)
      // Cast, or PostgreSQL would multiply two integers and overflow.
      .where(sql<boolean>`r.last_used_at < ${now} - cast(s.registration_prune_after_days as bigint) * ${DAY_MS}`)
      .orderBy('r.last_used_at')
      .limit(limit)
      .execute()
    return rows.map((row) => ({ accountId: row.account_id, clientId: row.client_id }))
  }
}
