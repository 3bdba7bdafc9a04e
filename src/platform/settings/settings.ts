import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import { TtlCache } from '../cache/ttl-cache.js'
import type { CacheInvalidation } from '../cache/invalidation.js'
import type { AccountSettingsTable, DB, SigningAlg } from '../storage/schema.js'
import type { Tx } from '../storage/transaction.js'

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

/** The longest any token signed under these settings can live: how long a retired key must stay published. */
export function longestSignedTokenLifetime(settings: AccountSettings): number {
  return Math.max(settings.accessTokenTtl, settings.idTokenTtl)
}

export class SettingsStore {
  readonly #cache: TtlCache<AccountSettings>

  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    invalidation: CacheInvalidation,
    cacheTtlMs: number,
  ) {
    this.#cache = new TtlCache(cacheTtlMs, clock)
    invalidation.onChange((topic, key) => topic === 'settings' && this.#cache.delete(key))
    invalidation.onFlush(() => this.#cache.clear())
  }

  /** The account's settings, from the cache; undefined only for an account that does not exist. */
  get(accountId: string): Promise<AccountSettings | undefined> {
    return this.#cache.get(accountId, () => this.read(this.db, accountId))
  }

  async read(db: Kysely<DB>, accountId: string): Promise<AccountSettings | undefined> {
    const row = await db.selectFrom('account_settings').selectAll().where('account_id', '=', accountId).executeTakeFirst()
    return row && fromRow(row)
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
