import type { Kysely } from 'kysely'
import { randomToken } from '../../platform/crypto/random.js'
import type { SecretBox } from '../../platform/crypto/secret-box.js'
import { newId } from '../../platform/ids.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { DB, RefreshTokensTable } from '../../platform/storage/schema.js'
import { type Flow, flowFromRow, secretDigest } from '../sign-in/flow-store.js'
import type { NewRefreshTokenRow, RotationSql } from './sql/rotation-sql.js'

/** A refresh token as the refresh grant reads it. */
export interface RefreshToken {
  id: string
  accountId: string
  grantId: string
  clientId: string
  scope: string[]
  idleTtl: number
  expiresAt: number
  absoluteExpiresAt: number
  spentAt: number | null
  /** The successor's token, while a retried refresh may still get it. */
  successor: string | null
}

/** What a new refresh token of a grant is issued with; its lifetime never exceeds the grant's absolute one. */
export interface RefreshTokenGrant {
  grantId: string
  clientId: string
  scope: readonly string[]
  /** Seconds of disuse after which it lapses (RFC 9700 §4.14.2). */
  idleTtl: number
  absoluteExpiresAt: number
}

/** A refresh token's own name, sealed under it: the successor is kept for the token it succeeds. */
const successorContext = (id: string) => `refresh_tokens.successor:${id}`

/**
 * Refresh tokens: 256 random bits, stored only as a digest. Each is spent by its one use (rotation, RFC 9700
 * §4.14.2); a spent token keeps its successor sealed, so a retried request within the account's reuse interval can
 * be answered with it.
 */
export class RefreshTokens {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly box: SecretBox,
    private readonly rotation: RotationSql,
  ) {}

  /** Issues a new token for the grant; answers it. */
  async issue(db: Kysely<DB>, accountId: string, grant: RefreshTokenGrant, now: number): Promise<string> {
    const token = randomToken()
    await forAccount(db, accountId)
      .insertInto('refresh_tokens', { ...newRow(grant, token, now), spent_at: null, successor: null })
      .execute()
    return token
  }

  /**
   * Spends `refresh` and issues `successor` for its grant, both or neither; the successor is kept sealed with the
   * spent token when `keepSuccessor` (a retry within the reuse interval gets it). False, with nothing written, when
   * another request spent the token first.
   */
  rotate(refresh: RefreshToken, grant: RefreshTokenGrant, successor: string, keepSuccessor: boolean, now: number): Promise<boolean> {
    const sealedSuccessor = keepSuccessor ? this.box.seal(successor, successorContext(refresh.id)) : null
    return this.rotation.rotate(refresh.accountId, { id: refresh.id, at: now, sealedSuccessor }, newRow(grant, successor, now))
  }

  async find(accountId: string, token: string): Promise<RefreshToken | undefined> {
    const row = await forAccount(this.db, accountId).selectFrom('refresh_tokens').selectAll().where('token_hash', '=', secretDigest(token)).executeTakeFirst()
    return row && this.#fromRow(row)
  }

  /** The token with its grant, in one statement: a refresh needs both. */
  async findWithGrant(accountId: string, token: string): Promise<{ refresh: RefreshToken; grant: Flow } | undefined> {
    const row = await forAccount(this.db, accountId)
      .selectFrom('refresh_tokens')
      .innerJoin('authorization_flows as grant', (join) => join.onRef('grant.id', '=', 'refresh_tokens.grant_id').onRef('grant.account_id', '=', 'refresh_tokens.account_id'))
      .selectAll('grant')
      .select([
        'refresh_tokens.id as token_id',
        'refresh_tokens.client_id as token_client_id',
        'refresh_tokens.scope as token_scope',
        'refresh_tokens.idle_ttl as token_idle_ttl',
        'refresh_tokens.expires_at as token_expires_at',
        'refresh_tokens.absolute_expires_at as token_absolute_expires_at',
        'refresh_tokens.spent_at as token_spent_at',
        'refresh_tokens.successor as token_successor',
      ])
      .where('refresh_tokens.token_hash', '=', secretDigest(token))
      .executeTakeFirst()
    if (!row) return undefined
    const refresh = this.#fromRow({
      id: row.token_id,
      account_id: row.account_id,
      grant_id: row.id,
      client_id: row.token_client_id,
      token_hash: '',
      scope: row.token_scope,
      idle_ttl: row.token_idle_ttl,
      expires_at: row.token_expires_at,
      absolute_expires_at: row.token_absolute_expires_at,
      spent_at: row.token_spent_at,
      successor: row.token_successor,
      created_at: 0,
    })
    return { refresh, grant: flowFromRow(row) }
  }

  #fromRow(row: RefreshTokensTable): RefreshToken {
    return {
      id: row.id,
      accountId: row.account_id,
      grantId: row.grant_id,
      clientId: row.client_id,
      scope: row.scope.split(' ').filter(Boolean),
      idleTtl: row.idle_ttl,
      expiresAt: row.expires_at,
      absoluteExpiresAt: row.absolute_expires_at,
      spentAt: row.spent_at,
      successor: row.successor === null ? null : this.box.open(row.successor, successorContext(row.id)),
    }
  }
}

/** A new token's row: its idle lifetime runs from now, never past the grant's absolute one. */
function newRow(grant: RefreshTokenGrant, token: string, now: number): NewRefreshTokenRow {
  return {
    id: newId('rt', now),
    grant_id: grant.grantId,
    client_id: grant.clientId,
    token_hash: secretDigest(token),
    scope: grant.scope.join(' '),
    idle_ttl: grant.idleTtl,
    expires_at: Math.min(now + grant.idleTtl * 1000, grant.absoluteExpiresAt),
    absolute_expires_at: grant.absoluteExpiresAt,
    created_at: now,
  }
}
