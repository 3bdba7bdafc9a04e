import { type ExpressionBuilder, type Kysely, sql } from 'kysely'
import { type Clock, toRfc3339 } from '../../platform/clock.js'
import { randomToken } from '../../platform/crypto/random.js'
import { ProblemError, notFound } from '../../platform/http/problems.js'
import { looksLikeId, newId } from '../../platform/ids.js'
import { isReservedScope } from '../../platform/management-auth/scopes.js'
import { decodeCursor, type Page, toPage } from '../../platform/pagination.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import type { DB, RegistrationTokensTable } from '../../platform/storage/schema.js'
import type { Tx } from '../../platform/storage/transaction.js'
import type { GrantType } from '../clients/client-metadata.js'
import { secretDigest } from '../sign-in/flow-store.js'
import { isValidScopeToken } from '../token/scope-policy.js'
import type { TokenLimits } from './registration-policy.js'

export const DEFAULT_TOKEN_LIFETIME_SECONDS = 24 * 3600
export const MAX_TOKEN_LIFETIME_SECONDS = 90 * 24 * 3600
export const MAX_TOKEN_USES = 10_000

export interface NewTokenInput {
  expires_in?: number
  max_uses?: number
  scope?: string
  grant_types?: GrantType[]
}

/** An initial access token as the management API shows it; `token` only once, when it is made. */
export interface TokenView {
  id: string
  token?: string
  expires_at: string
  max_uses: number
  uses: number
  scope: string | null
  grant_types: GrantType[] | null
  created_at: string
}

/** A token that registered a client: its id and what it narrows the policy to. */
export interface SpentToken extends TokenLimits {
  id: string
}

/**
 * Initial access tokens (RFC 7591 §3): the management API makes them, with an expiry, a number of uses and an
 * optional ceiling of scopes and grant types; a registration spends one use. Only a digest is stored, looked up by
 * its index as refresh tokens are: the token is 256 random bits, so the lookup leaks nothing worth having.
 */
export class InitialAccessTokens {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: SqlDialect,
    private readonly clock: Clock,
  ) {}

  async create(accountId: string, input: NewTokenInput): Promise<TokenView> {
    const scope = input.scope === undefined ? null : [...new Set(input.scope.split(' ').filter(Boolean))]
    const problems = (scope ?? []).flatMap((name) =>
      !isValidScopeToken(name) ? [`"${name}" is not a valid scope token`] : isReservedScope(name) ? [`${name}: herald: scopes are never given by registration`] : [],
    )
    if (problems.length > 0) throw new ProblemError('validation_failed', `scope: ${problems.join('; ')}`, problems.map((message) => ({ pointer: '/body/scope', message })))
    const token = randomToken()
    const now = this.clock.now()
    const row: Omit<RegistrationTokensTable, 'account_id'> = {
      id: newId('iat', now),
      token_hash: secretDigest(token),
      scope: scope === null ? null : scope.join(' '),
      grant_types: input.grant_types === undefined ? null : JSON.stringify([...new Set(input.grant_types)]),
      max_uses: input.max_uses ?? 1,
      uses: 0,
      expires_at: now + (input.expires_in ?? DEFAULT_TOKEN_LIFETIME_SECONDS) * 1000,
      created_at: now,
    }
    await forAccount(this.db, accountId).insertInto('registration_tokens', row).execute()
    return { ...toView({ ...row, account_id: accountId }), token }
  }

  async list(accountId: string, limit: number, cursor: string | undefined): Promise<Page<TokenView>> {
    const after = decodeCursor(cursor)
    let query = forAccount(this.db, accountId).listFrom('registration_tokens', 'asc').selectAll().limit(limit + 1)
    if (after !== undefined) query = query.where('id', '>', after)
    return toPage(await query.execute(), limit, (row) => row.id, toView)
  }

  /** Revokes the token: registrations made with it stay. */
  async delete(accountId: string, id: string): Promise<void> {
    const result = looksLikeId('iat', id) ? await forAccount(this.db, accountId).deleteFrom('registration_tokens').where('id', '=', id).executeTakeFirst() : undefined
    if (!result || result.numDeletedRows === 0n) throw notFound(`Initial access token ${id}`)
  }

  /** The token's limits, if it is one of the account's, unexpired, with a use left: a registration's first check, before its work. */
  async usable(accountId: string, token: string): Promise<SpentToken | undefined> {
    const row = await forAccount(this.db, accountId).selectFrom('registration_tokens').select(['id', 'scope', 'grant_types']).where(this.#usable(token)).executeTakeFirst()
    return row && spentToken(row)
  }

  /** Spends one use of `token` inside the registration's transaction; undefined when it has none left (or never had). */
  async spend(tx: Tx, accountId: string, token: string): Promise<SpentToken | undefined> {
    const row = await forAccount(tx.db, accountId)
      .updateTable('registration_tokens')
      .set((eb) => ({ uses: eb('uses', '+', 1) }))
      .where(this.#usable(token))
      .returning(['id', 'scope', 'grant_types'])
      .executeTakeFirst()
    return row && spentToken(row)
  }

  /** Housekeeping across every account, not a tenant's query: expired tokens, at most `limit` at a time. */
  async pruneExpired(limit: number): Promise<number> {
    return this.dialect.deleteBatch(this.db, 'registration_tokens', { condition: sql`expires_at <= ${this.clock.now()}`, orderBy: 'expires_at', limit })
  }

  /** The token's row, if it is unexpired and has a use left. */
  #usable(token: string) {
    const hash = secretDigest(token)
    const now = this.clock.now()
    return (eb: ExpressionBuilder<DB, 'registration_tokens'>) => eb.and([eb('token_hash', '=', hash), eb('expires_at', '>', now), eb('uses', '<', eb.ref('max_uses'))])
  }
}

function spentToken(row: Pick<RegistrationTokensTable, 'id' | 'scope' | 'grant_types'>): SpentToken {
  return { id: row.id, scope: row.scope, grantTypes: grantTypesOf(row.grant_types) }
}

function grantTypesOf(column: string | null): GrantType[] | null {
  return column === null ? null : (JSON.parse(column) as GrantType[])
}

function toView(row: RegistrationTokensTable): TokenView {
  return {
    id: row.id,
    expires_at: toRfc3339(row.expires_at),
    max_uses: row.max_uses,
    uses: row.uses,
    scope: row.scope,
    grant_types: grantTypesOf(row.grant_types),
    created_at: toRfc3339(row.created_at),
  }
}
