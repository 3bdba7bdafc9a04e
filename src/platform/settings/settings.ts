import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import type { Awaitable } from '../cache/awaitable.js'
import type { TtlCache } from '../cache/ttl-cache.js'
import type { CacheInvalidation } from '../cache/invalidation.js'
import { sameOrFresh } from '../cache/shallow-equal.js'
import { SharedValues } from '../cache/shared-values.js'
import type { AccountSettingsTable, DB } from '../storage/schema.js'
import type { Tx } from '../storage/transaction.js'
import { inList } from '../storage/in-list.js'
import type { Outbox } from '../events/outbox.js'
import { audienceProblem } from '../audience.js'
import { appUrlProblem } from '../app-urls.js'
import { ProblemError, notFound } from '../http/problems.js'
import { forAccount } from '../storage/account-queries.js'
import { isReservedScope } from '../management-auth/scopes.js'
import type { GrantType } from '../../authorization/clients/client-metadata.js'

/**
 * An account's settings, as every part of Herald reads them, the API shows them and the row stores them: one
 * shape, so nothing maps field by field (only the retry schedule is a JSON column). Lifetimes are in seconds; a
 * null `default_audience` means the issuer.
 */
export type AccountSettings = Omit<AccountSettingsTable, 'account_id' | 'updated_at' | 'webhook_retry_schedule' | 'require_par' | 'client_id_metadata_documents' | 'registration_grant_types'> & {
  registration_grant_types: GrantType[]
  webhook_retry_schedule: number[]
  require_par: boolean
  client_id_metadata_documents: boolean
}

const DAY = 24 * 3600

/** What a new account starts with; the README's settings table documents each value. */
export const DEFAULT_SETTINGS: AccountSettings = {
  access_token_ttl: 3600,
  refresh_token_idle_ttl: 14 * 24 * 3600,
  refresh_token_absolute_ttl: 90 * 24 * 3600,
  id_token_ttl: 3600,
  authorization_code_ttl: 60,
  default_audience: null,
  access_token_signing_alg: 'ES256',
  // Close to what Svix and Stripe do: after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, about 28 h in all.
  webhook_retry_schedule: [5, 300, 1800, 7200, 18000, 36000, 36000],
  webhook_retention_days: 30,
  webhook_disable_after: 5 * DAY,
  login_url: null,
  consent_url: null,
  logout_url: null,
  error_url: null,
  post_logout_url: null,
  login_challenge_ttl: 600,
  session_ttl: 30 * DAY,
  require_par: false,
  refresh_token_reuse_interval: 0,
  device_verification_url: null,
  device_done_url: null,
  device_code_ttl: 600,
  device_poll_interval: 5,
  client_id_metadata_documents: false,
  registration: 'disabled',
  registration_scope: 'openid profile email offline_access',
  registration_grant_types: ['authorization_code', 'refresh_token'],
  registration_max_clients: 1000,
  registration_prune_after_days: null,
  registration_rate_limit: 10,
}

/** The settings that name pages of the account's own app. */
export const APP_URL_SETTINGS = ['login_url', 'consent_url', 'logout_url', 'error_url', 'post_logout_url', 'device_verification_url', 'device_done_url'] as const

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
  login_challenge_ttl: { minimum: 60, maximum: 3600 },
  session_ttl: { minimum: 300, maximum: 365 * DAY },
  refresh_token_reuse_interval: { minimum: 0, maximum: 60 },
  device_code_ttl: { minimum: 60, maximum: 1800 },
  device_poll_interval: { minimum: 1, maximum: 60 },
} as const

/** Bounds on the webhook settings: a retry waits at most a day, and a schedule has 1 to 20 retries. */
export const WEBHOOK_BOUNDS = {
  retry_delay: { minimum: 1, maximum: DAY },
  retries: { minItems: 1, maxItems: 20 },
  webhook_retention_days: { minimum: 1, maximum: 365 },
  webhook_disable_after: { minimum: 3600, maximum: 30 * DAY },
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
    private readonly outbox: Outbox,
  ) {
    this.#cache = invalidation.cache('settings', { batch: (accountIds, cached) => this.#readMany(accountIds, cached) })
  }

  /** The account's settings, from the cache; undefined only for an account that does not exist. */
  get(accountId: string): Awaitable<AccountSettings | undefined> {
    return this.#cache.get(accountId)
  }

  async read(db: Kysely<DB>, accountId: string): Promise<AccountSettings | undefined> {
    const row = await forAccount(db, accountId).selectFrom('account_settings').selectAll().executeTakeFirst()
    return row && fromRow(row)
  }

  async #readMany(accountIds: readonly string[], cached: (accountId: string) => AccountSettings | undefined): Promise<Map<string, AccountSettings>> {
    const rows = await this.db.selectFrom('account_settings').selectAll().where('account_id', 'in', inList(accountIds)).execute()
    return new Map(rows.map((row) => [row.account_id, sameOrFresh(cached(row.account_id), sharedSettings(fromRow(row)))]))
  }

  /**
   * Applies a partial change. Raising a token lifetime also keeps every key that is still signing published
   * long enough for the longer-lived tokens it may now sign.
   */
  async update(tx: Tx, accountId: string, patch: Partial<AccountSettings>): Promise<AccountSettings> {
    const audience = typeof patch.default_audience === 'string' ? audienceProblem(patch.default_audience) : undefined
    if (audience) throw new ProblemError('validation_failed', `default_audience ${audience}`, [{ pointer: '/body/default_audience', message: audience }])
    const appUrls = APP_URL_SETTINGS.flatMap((field) => {
      const value = patch[field]
      const problem = typeof value === 'string' ? appUrlProblem(value) : undefined
      return problem ? [{ pointer: `/body/${field}`, message: problem }] : []
    })
    if (appUrls.length > 0) throw new ProblemError('validation_failed', 'An app URL is not acceptable', appUrls)
    // Registration never gives reserved scopes (see registration-policy.ts); saying otherwise here would mislead.
    if (patch.registration_scope?.split(' ').some(isReservedScope)) {
      throw new ProblemError('validation_failed', 'registration_scope must not name herald: scopes', [{ pointer: '/body/registration_scope', message: 'must not name reserved herald: scopes' }])
    }
    const now = this.clock.now()
    // Touching the row first locks it (on PostgreSQL) until commit, so a concurrent change can't slip in
    // between the read and the write and be lost, or break the check between two lifetimes.
    await forAccount(tx.db, accountId).updateTable('account_settings').set({ updated_at: now }).execute()
    const current = await this.read(tx.db, accountId)
    if (!current) throw notFound('The account settings')
    const next = { ...current, ...patch }
    if (next.refresh_token_absolute_ttl < next.refresh_token_idle_ttl) {
      throw new ProblemError('validation_failed', 'refresh_token_absolute_ttl must not be shorter than refresh_token_idle_ttl', [
        { pointer: '/body/refresh_token_absolute_ttl', message: 'must be at least refresh_token_idle_ttl' },
      ])
    }
    await forAccount(tx.db, accountId)
      .updateTable('account_settings')
      .set({ ...toRow(next), updated_at: now })
      .execute()
    const longestMs = longestSignedTokenLifetime(next) * 1000
    await forAccount(tx.db, accountId)
      .updateTable('signing_keys')
      .set((eb) => ({ published_until: eb('retires_at', '+', longestMs) }))
      .where('retires_at', '>', now)
      .where((eb) => eb('published_until', '<', eb('retires_at', '+', longestMs)))
      .execute()
    await this.outbox.record(tx, accountId, 'oauth.settings.updated', next, now)
    await this.invalidation.record(tx, 'settings', accountId)
    await this.invalidation.record(tx, 'keys', accountId)
    return next
  }

  async insertDefaults(tx: Tx, accountId: string): Promise<AccountSettings> {
    await forAccount(tx.db, accountId)
      .insertInto('account_settings', { ...toRow(DEFAULT_SETTINGS), updated_at: this.clock.now() })
      .execute()
    return DEFAULT_SETTINGS
  }
}

/**
 * Most accounts keep the defaults, or the same few changes to them: the cache holds one frozen record per distinct
 * set of values, as long as there are not many more distinct sets than this.
 */
const distinctSettings = new SharedValues<AccountSettings>(1024)

function sharedSettings(settings: AccountSettings): AccountSettings {
  return distinctSettings.of(JSON.stringify(settings), () => {
    Object.freeze(settings.webhook_retry_schedule)
    Object.freeze(settings.registration_grant_types)
    return settings
  })
}

function fromRow(row: AccountSettingsTable): AccountSettings {
  const { account_id: _account, updated_at: _updated, webhook_retry_schedule: schedule, require_par: requirePar, client_id_metadata_documents: documents, registration_grant_types: registrationGrants, ...settings } = row
  // Added to the rest object rather than spread into a new literal: V8's optimized code gives each `{ ...x, y }`
  // a hidden class of its own, and the settings cache would keep one per account.
  return Object.assign(settings, { webhook_retry_schedule: JSON.parse(schedule) as number[], require_par: requirePar === 1, client_id_metadata_documents: documents === 1, registration_grant_types: JSON.parse(registrationGrants) as GrantType[] })
}

function toRow(settings: AccountSettings): Omit<AccountSettingsTable, 'account_id' | 'updated_at'> {
  return { ...settings, webhook_retry_schedule: JSON.stringify(settings.webhook_retry_schedule), require_par: settings.require_par ? 1 : 0, client_id_metadata_documents: settings.client_id_metadata_documents ? 1 : 0, registration_grant_types: JSON.stringify(settings.registration_grant_types) }
}
