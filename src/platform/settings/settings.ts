import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import type { TtlCache } from '../cache/ttl-cache.js'
import type { CacheInvalidation } from '../cache/invalidation.js'
import type { AccountSettingsTable, DB, SigningAlg } from '../storage/schema.js'
import type { Tx } from '../storage/transaction.js'
import { recordEvent } from '../events/outbox.js'
import { ProblemError, notFound } from '../http/problems.js'

/** An account's token settings, as every part of Herald reads them. Lifetimes are in seconds. */
export interface AccountSettings {
  accessTokenTtl: number
  refreshTokenIdleTtl: number
  refreshTokenAbsoluteTtl: number
  idTokenTtl: number
  authorizationCodeTtl: number
  /** `aud` of access tokens when neither the request nor the client names one; null means the issuer. */
  defaultAudience: string | null
  accessTokenSigningAlg: SigningAlg
}

/** What a new account starts with; the README's settings table documents each value. */
export const DEFAULT_SETTINGS: AccountSettings = {
  accessTokenTtl: 3600,
  refreshTokenIdleTtl: 14 * 24 * 3600,
  refreshTokenAbsoluteTtl: 90 * 24 * 3600,
  idTokenTtl: 3600,
  authorizationCodeTtl: 60,
  defaultAudience: null,
  accessTokenSigningAlg: 'ES256',
}

const DAY = 24 * 3600

/**
 * Bounds on every lifetime, in seconds. Access and ID tokens cannot be revoked at resource servers that
 * verify them locally, so they stay short; authorization codes follow RFC 6749 §4.1.2's ten-minute ceiling.
 */
export const LIFETIME_BOUNDS = {
  access_token_ttl: { minimum: 60, maximum: DAY },
  refresh_token_idle_ttl: { minimum: 300, maximum: 365 * DAY },
  refresh_token_absolute_ttl: { minimum: 300, maximum: 5 * 365 * DAY },
  id_token_ttl: { minimum: 60, maximum: DAY },
  authorization_code_ttl: { minimum: 10, maximum: 600 },
} as const

/** The longest any token signed under these settings can live: how long a retired key must stay published. */
export function longestSignedTokenLifetime(settings: AccountSettings): number {
  return Math.max(settings.accessTokenTtl, settings.idTokenTtl)
}

export class SettingsStore {
  readonly #cache: TtlCache<AccountSettings>

  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly invalidation: CacheInvalidation,
  ) {
    this.#cache = invalidation.cache('settings')
  }

  /** The account's settings, from the cache; undefined only for an account that does not exist. */
  get(accountId: string): Promise<AccountSettings | undefined> {
    return this.#cache.get(accountId, () => this.read(this.db, accountId))
  }

  async read(db: Kysely<DB>, accountId: string): Promise<AccountSettings | undefined> {
    const row = await db.selectFrom('account_settings').selectAll().where('account_id', '=', accountId).executeTakeFirst()
    return row && fromRow(row)
  }

  /**
   * Applies a partial change. Raising a token lifetime also keeps every key that is still signing published
   * long enough for the longer-lived tokens it may now sign.
   */
  async update(tx: Tx, accountId: string, patch: Partial<AccountSettings>): Promise<AccountSettings> {
    const current = await this.read(tx.db, accountId)
    if (!current) throw notFound('The account settings')
    const next = { ...current, ...patch }
    if (next.refreshTokenAbsoluteTtl < next.refreshTokenIdleTtl) {
      throw new ProblemError('validation_failed', 'refresh_token_absolute_ttl must not be shorter than refresh_token_idle_ttl', [
        { pointer: '/body/refresh_token_absolute_ttl', message: 'must be at least refresh_token_idle_ttl' },
      ])
    }
    const now = this.clock.now()
    await tx.db.updateTable('account_settings').set(toRow(accountId, next, now)).where('account_id', '=', accountId).execute()
    const longestMs = longestSignedTokenLifetime(next) * 1000
    await tx.db
      .updateTable('signing_keys')
      .set((eb) => ({ published_until: eb('retires_at', '+', longestMs) }))
      .where('account_id', '=', accountId)
      .where('retires_at', '>', now)
      .where((eb) => eb('published_until', '<', eb('retires_at', '+', longestMs)))
      .execute()
    await recordEvent(tx, accountId, 'oauth.settings.updated', toView(next), now)
    await this.invalidation.changed(tx, 'settings', accountId)
    await this.invalidation.changed(tx, 'keys', accountId)
    return next
  }

  async insertDefaults(tx: Tx, accountId: string): Promise<AccountSettings> {
    await tx.db.insertInto('account_settings').values(toRow(accountId, DEFAULT_SETTINGS, this.clock.now())).execute()
    return DEFAULT_SETTINGS
  }
}

function fromRow(row: AccountSettingsTable): AccountSettings {
  return {
    accessTokenTtl: row.access_token_ttl,
    refreshTokenIdleTtl: row.refresh_token_idle_ttl,
    refreshTokenAbsoluteTtl: row.refresh_token_absolute_ttl,
    idTokenTtl: row.id_token_ttl,
    authorizationCodeTtl: row.authorization_code_ttl,
    defaultAudience: row.default_audience,
    accessTokenSigningAlg: row.access_token_signing_alg,
  }
}

function toRow(accountId: string, settings: AccountSettings, now: number): AccountSettingsTable {
  return {
    account_id: accountId,
    access_token_ttl: settings.accessTokenTtl,
    refresh_token_idle_ttl: settings.refreshTokenIdleTtl,
    refresh_token_absolute_ttl: settings.refreshTokenAbsoluteTtl,
    id_token_ttl: settings.idTokenTtl,
    authorization_code_ttl: settings.authorizationCodeTtl,
    default_audience: settings.defaultAudience,
    access_token_signing_alg: settings.accessTokenSigningAlg,
    updated_at: now,
  }
}

/** The settings as the API shows them (and as `oauth.settings.updated` carries them). */
export interface SettingsView {
  access_token_ttl: number
  refresh_token_idle_ttl: number
  refresh_token_absolute_ttl: number
  id_token_ttl: number
  authorization_code_ttl: number
  default_audience: string | null
  access_token_signing_alg: SigningAlg
}

export function toView(settings: AccountSettings): SettingsView {
  return {
    access_token_ttl: settings.accessTokenTtl,
    refresh_token_idle_ttl: settings.refreshTokenIdleTtl,
    refresh_token_absolute_ttl: settings.refreshTokenAbsoluteTtl,
    id_token_ttl: settings.idTokenTtl,
    authorization_code_ttl: settings.authorizationCodeTtl,
    default_audience: settings.defaultAudience,
    access_token_signing_alg: settings.accessTokenSigningAlg,
  }
}

export function fromView(view: Partial<SettingsView>): Partial<AccountSettings> {
  const patch: Partial<AccountSettings> = {}
  if (view.access_token_ttl !== undefined) patch.accessTokenTtl = view.access_token_ttl
  if (view.refresh_token_idle_ttl !== undefined) patch.refreshTokenIdleTtl = view.refresh_token_idle_ttl
  if (view.refresh_token_absolute_ttl !== undefined) patch.refreshTokenAbsoluteTtl = view.refresh_token_absolute_ttl
  if (view.id_token_ttl !== undefined) patch.idTokenTtl = view.id_token_ttl
  if (view.authorization_code_ttl !== undefined) patch.authorizationCodeTtl = view.authorization_code_ttl
  if (view.default_audience !== undefined) patch.defaultAudience = view.default_audience
  if (view.access_token_signing_alg !== undefined) patch.accessTokenSigningAlg = view.access_token_signing_alg
  return patch
}
