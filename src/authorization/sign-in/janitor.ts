import { type Kysely, sql } from 'kysely'
import type { SqlDialect } from '../../platform/storage/dialects/sql-dialect.js'
import type { DB } from '../../platform/storage/schema.js'

/**
 * Housekeeping across every account, not a tenant's query: deletes sign-in rows that can serve no one any more, at
 * most `limit` at a time. A flow lapses with its current stage (a redeemed one, a grant, with the last token it may
 * issue, taking its refresh tokens with it); a logout request with its challenge; a session when it expires; a consent
 * when its `remember_for` ends; the device grant's rows when their codes lapse.
 */
export class SignInJanitor {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: SqlDialect,
  ) {}

  async pruneFlows(now: number, limit: number): Promise<number> {
    return this.dialect.deleteBatch(this.db, 'authorization_flows', { condition: sql`expires_at <= ${now}`, orderBy: 'expires_at', limit })
  }

  async pruneLogoutRequests(now: number, limit: number): Promise<number> {
    return this.dialect.deleteBatch(this.db, 'logout_requests', { condition: sql`expires_at <= ${now}`, orderBy: 'expires_at', limit })
  }

  async pruneSessions(now: number, limit: number): Promise<number> {
    return this.dialect.deleteBatch(this.db, 'browser_sessions', { condition: sql`expires_at <= ${now}`, orderBy: 'expires_at', limit })
  }

  async pruneConsents(now: number, limit: number): Promise<number> {
    return this.dialect.deleteBatch(this.db, 'consents', { condition: sql`expires_at <= ${now}`, orderBy: 'expires_at', limit })
  }

  /** A device authorization lapses with its device code (RFC 8628 §3.2 expires_in); a device challenge with its entry. */
  async pruneDeviceAuthorizations(now: number, limit: number): Promise<number> {
    const authorizations = await this.dialect.deleteBatch(this.db, 'device_authorizations', { condition: sql`expires_at <= ${now}`, orderBy: 'expires_at', limit })
    return authorizations + (await this.dialect.deleteBatch(this.db, 'device_challenges', { condition: sql`expires_at <= ${now}`, orderBy: 'expires_at', limit }))
  }
}
