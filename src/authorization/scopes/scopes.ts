import type { Kysely } from 'kysely'
import { type Clock, toRfc3339 } from '../../platform/clock.js'
import type { Outbox } from '../../platform/events/outbox.js'
import { ProblemError, notFound } from '../../platform/http/problems.js'
import { isReservedScope } from '../../platform/management-auth/scopes.js'
import { decodeCursor, type Page, toPage } from '../../platform/pagination.js'
import type { DB, ScopeKind, ScopesTable } from '../../platform/storage/schema.js'
import { transaction } from '../../platform/storage/transaction.js'
import type { ClientStore } from '../clients/client-store.js'
import { isValidScopeToken } from '../token/scope-policy.js'
import { forAccount } from '../../platform/storage/account-queries.js'

export interface ScopeView {
  name: string
  description: string
  kind: ScopeKind
  created_at: string
  updated_at: string
}

/** How many of the clients still using a scope a refusal to delete it names. */
const CLIENTS_NAMED = 10

/**
 * The account's scope registry. Names follow RFC 6749 §3.3; the reserved `herald:` names are Herald's own and
 * can't be created or deleted; the OIDC scopes exist in every account and can't be deleted.
 */
export class Scopes {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clients: ClientStore,
    private readonly clock: Clock,
    private readonly outbox: Outbox,
  ) {}

  async create(accountId: string, name: string, description: string): Promise<ScopeView> {
    if (!isValidScopeToken(name)) {
      throw new ProblemError('validation_failed', 'name is not a valid scope token (RFC 6749 §3.3)', [
        { pointer: '/body/name', message: 'must be printable ASCII without spaces, quotes or backslashes' },
      ])
    }
    if (isReservedScope(name)) {
      throw new ProblemError('validation_failed', 'names starting with herald: are reserved', [{ pointer: '/body/name', message: 'is reserved' }])
    }
    return transaction(this.db, async (tx) => {
      const existing = await forAccount(tx.db, accountId).selectFrom('scopes').select('name').where('name', '=', name).executeTakeFirst()
      if (existing) throw new ProblemError('conflict', `The scope ${name} already exists`)
      const now = this.clock.now()
      const row: ScopesTable = { account_id: accountId, name, description, kind: 'custom', created_at: now, updated_at: now }
      await forAccount(tx.db, accountId).insertInto('scopes', row).execute()
      const view = toView(row)
      await this.outbox.record(tx, accountId, 'oauth.scope.created', view, now)
      return view
    })
  }

  async get(accountId: string, name: string): Promise<ScopeView> {
    return toView(await this.#existing(this.db, accountId, name))
  }

  async list(accountId: string, limit: number, cursor: string | undefined): Promise<Page<ScopeView>> {
    let query = forAccount(this.db, accountId).listFrom('scopes', 'asc', 'name').selectAll().limit(limit + 1)
    const after = decodeCursor(cursor)
    if (after !== undefined) query = query.where('name', '>', after)
    const rows = await query.execute()
    return toPage(rows, limit, (row) => row.name, toView)
  }

  async update(accountId: string, name: string, description: string): Promise<ScopeView> {
    return transaction(this.db, async (tx) => {
      const row = await this.#existing(tx.db, accountId, name)
      const now = this.clock.now()
      await forAccount(tx.db, accountId).updateTable('scopes').set({ description, updated_at: now }).where('name', '=', name).execute()
      const view = toView({ ...row, description, updated_at: now })
      await this.outbox.record(tx, accountId, 'oauth.scope.updated', view, now)
      return view
    })
  }

  /** Refused while any client may still request the scope: the registry never points at nothing. */
  async delete(accountId: string, name: string): Promise<void> {
    await transaction(this.db, async (tx) => {
      const row = await this.#existing(tx.db, accountId, name)
      if (row.kind === 'oidc') throw new ProblemError('conflict', `${name} is an OpenID Connect scope and exists in every account`)
      const users = await this.clients.clientsAllowing(tx, accountId, name, CLIENTS_NAMED)
      if (users.length > 0) {
        throw new ProblemError('conflict', `Clients still allow ${name}; remove it from them first: ${users.join(', ')}${users.length === CLIENTS_NAMED ? ', …' : ''}`)
      }
      await forAccount(tx.db, accountId).deleteFrom('scopes').where('name', '=', name).execute()
      await this.outbox.record(tx, accountId, 'oauth.scope.deleted', { name }, this.clock.now())
    })
  }

  async #existing(db: Kysely<DB>, accountId: string, name: string): Promise<ScopesTable> {
    const row = !isValidScopeToken(name) ? undefined : await forAccount(db, accountId).selectFrom('scopes').selectAll().where('name', '=', name).executeTakeFirst()
    if (!row) throw notFound(`Scope ${name}`)
    return row
  }
}

function toView(row: ScopesTable): ScopeView {
  return { name: row.name, description: row.description, kind: row.kind, created_at: toRfc3339(row.created_at), updated_at: toRfc3339(row.updated_at) }
}
