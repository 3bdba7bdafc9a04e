import type { Kysely } from 'kysely'
import type { Clock } from '../../platform/clock.js'
import type { Outbox } from '../../platform/events/outbox.js'
import { type Page, decodeCursor, toPage } from '../../platform/pagination.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { BrowserSessionsTable, ConsentsTable, DB } from '../../platform/storage/schema.js'
import { transaction } from '../../platform/storage/transaction.js'
import type { GrantRevocation } from '../grants/grant-revocation.js'
import type { BrowserSessions } from '../sign-in/browser-sessions.js'
import type { FlowStore } from '../sign-in/flow-store.js'

export interface SessionView {
  id: string
  subject: string
  auth_time: string
  acr: string | null
  amr: string[]
  remembered: boolean
  expires_at: string
  created_at: string
}

export interface ConsentView {
  subject: string
  client_id: string
  scope: string[]
  audience: string[]
  expires_at: string | null
  created_at: string
  updated_at: string
}

const iso = (ms: number) => new Date(ms).toISOString()

/**
 * A user's sessions and remembered consents, as the account's management API shows and ends them (Hydra's
 * `/sessions/login` and `/sessions/consent`). Ending a session stops later logins in its browser from being skipped
 * and closes the sign-ins under way on it; revoking a consent also revokes every grant made under it, so its refresh
 * tokens stop and its access tokens introspect inactive, and closes the sign-ins under way, so no code issued before
 * it is redeemed after it.
 */
export class UserSessions {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly sessions: BrowserSessions,
    private readonly flows: FlowStore,
    private readonly grants: GrantRevocation,
    private readonly outbox: Outbox,
    private readonly clock: Clock,
  ) {}

  /** The subject's live sessions, newest first. */
  async listSessions(accountId: string, subject: string, limit: number, cursor: string | undefined): Promise<Page<SessionView>> {
    const after = decodeCursor(cursor)
    let query = forAccount(this.db, accountId)
      .selectFrom('browser_sessions')
      .selectAll()
      .where('subject', '=', subject)
      .where('ended_at', 'is', null)
      .where('expires_at', '>', this.clock.now())
      .orderBy('id', 'desc')
      .limit(limit + 1)
    if (after !== undefined) query = query.where('id', '<', after)
    return toPage(await query.execute(), limit, (row) => row.id, sessionView)
  }

  /** Ends the subject's live sessions (or one of them); answers how many ended. */
  async endSessions(accountId: string, subject: string, sessionId: string | undefined): Promise<number> {
    return transaction(this.db, (tx) => this.sessions.end(tx, accountId, { subject, sessionId }, 'revoked', this.clock.now()))
  }

  async listConsents(accountId: string, subject: string, clientId: string | undefined, limit: number, cursor: string | undefined): Promise<Page<ConsentView>> {
    const after = decodeCursor(cursor)
    let query = forAccount(this.db, accountId).selectFrom('consents').selectAll().where('subject', '=', subject).orderBy('client_id').limit(limit + 1)
    if (clientId !== undefined) query = query.where('client_id', '=', clientId)
    if (after !== undefined) query = query.where('client_id', '>', after)
    return toPage(await query.execute(), limit, (row) => row.client_id, consentView)
  }

  /**
   * Revokes the subject's consents (to one client, or all) and every grant made under them, and closes the sign-ins
   * still under way; answers how many grants were revoked. A consent that was not remembered still gave grants:
   * those are revoked, and announced, too.
   */
  async revokeConsents(accountId: string, subject: string, clientId: string | undefined): Promise<number> {
    const now = this.clock.now()
    return transaction(this.db, async (tx) => {
      // Flows before consents, the order a sign-in's last step writes them in (AuthorizeFlow.afterConsent).
      await this.flows.close(tx.db, accountId, { subject, clientId }, now)
      let consents = forAccount(tx.db, accountId).deleteFrom('consents').where('subject', '=', subject)
      if (clientId !== undefined) consents = consents.where('client_id', '=', clientId)
      const revoked = await consents.returning('client_id').execute()
      let grants = forAccount(tx.db, accountId).selectFrom('authorization_flows').select(['id', 'client_id']).where('subject', '=', subject).where('stage', '=', 'redeemed').where('revoked_at', 'is', null)
      if (clientId !== undefined) grants = grants.where('client_id', '=', clientId)
      const live = await grants.execute()
      for (const grant of live) await this.grants.revoke(tx, accountId, grant.id, 'consent_revoked', now)
      const clients = new Set([...revoked, ...live].map((row) => row.client_id))
      const events = [...clients].map((client) => ({ accountId, type: 'oauth.consent.revoked', data: { subject, client_id: client } }))
      await this.outbox.recordAll(tx, events, now)
      return live.length
    })
  }
}

function sessionView(row: BrowserSessionsTable): SessionView {
  return {
    id: row.id,
    subject: row.subject,
    auth_time: iso(row.auth_time * 1000),
    acr: row.acr,
    amr: JSON.parse(row.amr) as string[],
    remembered: row.remembered === 1,
    expires_at: iso(row.expires_at),
    created_at: iso(row.created_at),
  }
}

function consentView(row: ConsentsTable): ConsentView {
  return {
    subject: row.subject,
    client_id: row.client_id,
    scope: row.scope.split(' ').filter(Boolean),
    audience: JSON.parse(row.audience) as string[],
    expires_at: row.expires_at === null ? null : iso(row.expires_at),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  }
}
