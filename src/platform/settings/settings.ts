import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import type { Awaitable } from '../cache/awaitable.js'
import type { TtlCache } from '../cache/ttl-cache.js'
import type { CacheInvalidation } from '../cache/invalidation.js'
import type { AccountSettingsTable, DB } from '../storage/schema.js'
import type { Tx } from '../storage/transaction.js'
import { recordEvent } from '../events/outbox.js'
import { ProblemError, notFound } from '../http/problems.js'

/**
 * An account's token settings, as every part of Herald reads them, the API shows them and the row stores them:
 * one shape, so nothing maps field by field. Lifetimes are in seconds; a null `default_audience` means the issuer.
 */
export type AccountSettings = Omit<AccountSettingsTable, 'account_id' | 'updated_at'>

/** What a new account starts with; the README's settings table documents each value. */
export const DEFAULT_SETTINGS: AccountSettings = {
  access_token_ttl: 3600,
  refresh_token_idle_ttl: 14 * 24 * 3600,
  refresh_token_absolute_ttl: 90 * 24 * 3600,
  id_token_ttl: 3600,
  authorization_code_ttl: 60,
  default_audience: null,
  access_token_signing_alg: 'ES256',
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
  return Math.max(settings.access_token_ttl, settings.id_token_ttl)
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
  get(accountId: string): Awaitable<AccountSettings | undefined> {
    return this.#cache.get(accountId, () => this.read(this.db, accountId))
  }

  async read(db: Kysely<DB>, accountId: string): Promise<AccountSettings | undefined> {
    const row = await db.selectFrom('account_settings').selectAll().where('account_id', '=', accountId).executeTakeFirst()
    if (!row) return undefined
    const { account_id: _account, updated_at: _updated, ...settings } = row
    return settings
  }

  /**
   * Applies a partial change. Raising a token lifetime also keeps every key that is still signing published
   * long enough for the longer-lived tokens it may now sign.
   */
  async update(tx: Tx, accountId: string, patch: Partial<AccountSettings>): Promise<AccountSettings> {
    const current = await this.read(tx.db, accountId)
    if (!current) throw notFound('The account settings')
    const next = { ...current, ...patch }
    if (next.refresh_token_absolute_ttl < next.refresh_token_idle_ttl) {
      throw new ProblemError('validation_failed', 'refresh_token_absolute_ttl must not be shorter than refresh_token_idle_ttl', [
        { pointer: '/body/refresh_token_absolute_ttl', message: 'must be at least refresh_token_idle_ttl' },
      ])
    }
    const now = this.clock.now()
    await tx.db.updateTable('account_settings').set({ ...next, updated_at: now }).where('account_id', '=', accountId).execute()
    const longestMs = longestSignedTokenLifetime(next) * 1000
    await tx.db
      .updateTable('signing_keys')
      .set((eb) => ({ published_until: eb('retires_at', '+', longestMs) }))
      .where('account_id', '=', accountId)
      .where('retires_at', '>', now)
      .where((eb) => eb('published_until', '<', eb('retires_at', '+', longestMs)))
      .execute()
    await recordEvent(tx, accountId, 'oauth.settings.updated', next, now)
    await this.invalidation.changed(tx, 'settings', accountId)
    await this.invalidation.changed(tx, 'keys', accountId)
    return next
  }

  async insertDefaults(tx: Tx, accountId: string): Promise<AccountSettings> {
    await tx.db.insertInto('account_settings').values({ ...DEFAULT_SETTINGS, account_id: accountId, updated_at: this.clock.now() }).execute()
    return DEFAULT_SETTINGS
  }
}
