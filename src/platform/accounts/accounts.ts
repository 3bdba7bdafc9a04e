import type { Kysely } from 'kysely'
import { type Clock, toRfc3339 } from '../clock.js'
import { type Awaitable, andThen } from '../cache/awaitable.js'
import type { TtlCache } from '../cache/ttl-cache.js'
import type { CacheInvalidation } from '../cache/invalidation.js'
import { sameOrFresh } from '../cache/shallow-equal.js'
import { sharedString } from '../cache/shared-values.js'
import { notFound } from '../http/problems.js'
import { looksLikeId, newId } from '../ids.js'
import type { KeyStore } from '../keys/key-store.js'
import { decodeCursor, type Page, toPage } from '../pagination.js'
import type { SettingsStore } from '../settings/settings.js'
import type { AccountStatus, AccountsTable, DB } from '../storage/schema.js'
import { type Tx, transaction } from '../storage/transaction.js'
import { inList } from '../storage/in-list.js'

export interface Account {
  id: string
  name: string
  status: AccountStatus
  adminClientId: string
  createdAt: number
  updatedAt: number
}

export interface AccountView {
  id: string
  name: string
  status: AccountStatus
  issuer: string
  created_at: string
  updated_at: string
}

export interface AdminCredentials {
  client_id: string
  client_secret: string
}

/**
 * What the authorization area adds to every new account (its OIDC scopes and the management client), and stops when
 * one is disabled, kept behind an interface so the platform does not depend on the area.
 */
export interface AccountProvisioning {
  /** Adds the account's OIDC scopes and its management client, under the id the account row already names. */
  provision(tx: Tx, accountId: string, adminClientId: string): Promise<AdminCredentials>
  resetAdminSecret(tx: Tx, accountId: string, adminClientId: string): Promise<AdminCredentials>
  /** Stops, in `tx`, what was under way in the account being disabled, so none of it finishes if it is enabled again. */
  disable(tx: Tx, accountId: string, now: number): Promise<void>
}

export class Accounts {
  readonly #cache: TtlCache<Account>

  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly invalidation: CacheInvalidation,
    private readonly settings: SettingsStore,
    private readonly keys: KeyStore,
    private readonly provisioning: AccountProvisioning,
    private readonly publicUrl: string,
  ) {
    this.#cache = invalidation.cache('account', { batch: (ids, cached) => this.#readMany(ids, cached) })
  }

  issuerOf(accountId: string): string {
    return `${this.publicUrl}/accounts/${accountId}`
  }

  /** The account if it exists and is enabled, from the cache; what every route under an account's base uses. */
  findActive(accountId: string): Awaitable<Account | undefined> {
    if (!looksLikeId('acct', accountId)) return undefined
    return andThen(this.#cache.get(accountId), (account) => (account?.status === 'active' ? account : undefined))
  }

  /**
   * Makes an account and everything it needs to work, in one transaction: its settings, signing keys, the
   * OIDC scopes and a management client allowed every reserved scope, whose secret is returned only here. The keys
   * are generated first, off the event loop, so the transaction holds the database only for its writes, and it
   * writes each row once: the account row names its management client before the client is made.
   */
  async create(name: string): Promise<{ account: AccountView; admin_client: AdminCredentials }> {
    const keys = await this.keys.generate()
    return transaction(this.db, async (tx) => {
      const now = this.clock.now()
      const row: AccountsTable = { id: newId('acct', now), name, status: 'active', admin_client_id: newId('cli', now), created_at: now, updated_at: now }
      await tx.db.insertInto('accounts').values(row).execute()
      await this.settings.insertDefaults(tx, row.id)
      await this.keys.createInitialKeys(tx, row.id, keys)
      const admin = await this.provisioning.provision(tx, row.id, row.admin_client_id)
      return { account: this.view(fromRow(row)), admin_client: admin }
    })
  }

  async get(accountId: string): Promise<AccountView> {
    const account = await this.#read(this.db, accountId)
    if (!account) throw notFound(`Account ${accountId}`)
    return this.view(account)
  }

  async list(limit: number, cursor: string | undefined): Promise<Page<AccountView>> {
    let query = this.db.selectFrom('accounts').selectAll().orderBy('id').limit(limit + 1)
    const after = decodeCursor(cursor)
    if (after !== undefined) query = query.where('id', '>', after)
    const rows = await query.execute()
    return toPage(rows, limit, (row) => row.id, (row) => this.view(fromRow(row)))
  }

  async setStatus(accountId: string, status: AccountStatus): Promise<AccountView> {
    if (!looksLikeId('acct', accountId)) throw notFound(`Account ${accountId}`)
    return transaction(this.db, async (tx) => {
      const now = this.clock.now()
      const result = await tx.db.updateTable('accounts').set({ status, updated_at: now }).where('id', '=', accountId).executeTakeFirst()
      if (result.numUpdatedRows === 0n) throw notFound(`Account ${accountId}`)
      if (status === 'disabled') await this.provisioning.disable(tx, accountId, now)
      await this.invalidation.record(tx, 'account', accountId)
      const account = await this.#read(tx.db, accountId)
      if (!account) throw notFound(`Account ${accountId}`)
      return this.view(account)
    })
  }

  /** Issues a new secret for the account's original management client; tokens under the old one stop working. */
  async resetAdmin(accountId: string): Promise<AdminCredentials> {
    return transaction(this.db, async (tx) => {
      const account = await this.#read(tx.db, accountId)
      if (!account) throw notFound(`Account ${accountId}`)
      return this.provisioning.resetAdminSecret(tx, accountId, account.adminClientId)
    })
  }

  view(account: Account): AccountView {
    return {
      id: account.id,
      name: account.name,
      status: account.status,
      issuer: this.issuerOf(account.id),
      created_at: toRfc3339(account.createdAt),
      updated_at: toRfc3339(account.updatedAt),
    }
  }

  async #readMany(accountIds: readonly string[], cached: (id: string) => Account | undefined): Promise<Map<string, Account>> {
    const rows = await this.db.selectFrom('accounts').selectAll().where('id', 'in', inList(accountIds)).execute()
    return new Map(rows.map((row) => [row.id, sameOrFresh(cached(row.id), fromRow(row))]))
  }

  async #read(db: Kysely<DB>, accountId: string): Promise<Account | undefined> {
    if (!looksLikeId('acct', accountId)) return undefined
    const row = await db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirst()
    return row && fromRow(row)
  }
}

function fromRow(row: AccountsTable): Account {
  return {
    id: row.id,
    name: row.name,
    status: sharedString(row.status),
    adminClientId: row.admin_client_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}
