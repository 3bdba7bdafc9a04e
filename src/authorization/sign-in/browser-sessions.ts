import type { Kysely } from 'kysely'
import { constantTimeEqual, randomToken } from '../../platform/crypto/random.js'
import { newId } from '../../platform/ids.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { Outbox } from '../../platform/events/outbox.js'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import type { DB } from '../../platform/storage/schema.js'
import type { Tx } from '../../platform/storage/transaction.js'
import type { RegisteredClient } from '../clients/client-store.js'
import type { BackchannelLogoutEndpoints } from '../logout/backchannel.js'
import { type FlowStore, secretDigest } from './flow-store.js'

/** A user's authentication in one browser: what the ID token's `sid`, `auth_time`, `acr` and `amr` come from. */
export interface BrowserSession {
  id: string
  subject: string
  /** Seconds since the epoch. */
  authTime: number
  acr: string | null
  amr: string[]
  remembered: boolean
  expiresAt: number
}

export type NewSession = Omit<BrowserSession, 'id'>

/**
 * Browser sessions. The `herald_session` cookie holds the session's id and a secret, of which only a digest is
 * stored; a session serves later logins only while it is remembered, unexpired and not ended.
 */
export class BrowserSessions {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: SqlDialect,
    private readonly flows: FlowStore,
    private readonly outbox: Outbox,
    private readonly logoutEndpoints: BackchannelLogoutEndpoints,
  ) {}

  /**
   * Ends the live sessions `which` names (one by id, a subject's, or one of a subject's), announcing each with
   * `oauth.session.ended` and telling the clients that took part in it through their back-channel logout endpoints;
   * answers how many ended. The sign-ins still under way on them (all of the subject's, when all its sessions end)
   * are closed with them, so none of them finishes as the user who is no longer signed in.
   */
  async end(tx: Tx, accountId: string, which: { sessionId: string; subject?: string } | { sessionId?: string; subject: string }, reason: 'logout' | 'revoked', now: number): Promise<number> {
    let query = forAccount(tx.db, accountId).updateTable('browser_sessions').set({ ended_at: now, updated_at: now }).where('ended_at', 'is', null)
    if (which.sessionId !== undefined) query = query.where('id', '=', which.sessionId)
    if (which.subject !== undefined) query = query.where('subject', '=', which.subject)
    const ended = await query.returning(['id', 'subject']).execute()
    // All of the subject's sessions end: so do all its sign-ins under way, on one of them or on none yet (a flow on a
    // session is always of the session's subject).
    const closing = which.sessionId === undefined && which.subject !== undefined ? { subject: which.subject } : { sessionIds: ended.map((row) => row.id) }
    await this.flows.close(tx.db, accountId, closing, now)
    const events = ended.map((row) => ({ accountId, type: 'oauth.session.ended', data: { session_id: row.id, subject: row.subject, reason } }))
    const eventIds = await this.outbox.recordAll(tx, events, now)
    await this.logoutEndpoints.notify(tx, accountId, ended.map((row, index) => ({ sessionId: row.id, eventId: eventIds[index]! })))
    return ended.length
  }

  /**
   * Notes, in `tx`, that the client took part in the session, when it has a back-channel logout endpoint to tell
   * when the session ends. Call it after `holdLive` (or `create`) in the same `tx`: an `end` that comes later waits
   * for `tx` and then finds this client.
   */
  async join(tx: Tx, accountId: string, sessionId: string, client: RegisteredClient, now: number): Promise<void> {
    if (client.metadata.backchannel_logout_uri === null) return
    await forAccount(tx.db, accountId)
      .insertInto('session_clients', { session_id: sessionId, client_id: client.id, created_at: now })
      .onConflict((conflict) => conflict.columns(['session_id', 'client_id']).doNothing())
      .execute()
  }

  /**
   * Whether session `id` is live, locking its row in `tx` so that an `end` waits for `tx` (and then closes what `tx`
   * wrote). Take it before moving a flow on the session: `end` locks the session before its flows, and so must we.
   */
  async holdLive(tx: Tx, accountId: string, id: string, now: number): Promise<boolean> {
    return (await this.dialect.forUpdate(this.#live(tx.db, accountId, id, now).select('id')).executeTakeFirst()) !== undefined
  }

  /** Whether session `id` is live (neither ended nor expired). */
  async isLive(accountId: string, id: string, now: number): Promise<boolean> {
    return (await this.#live(this.db, accountId, id, now).select('id').executeTakeFirst()) !== undefined
  }

  #live(db: Kysely<DB>, accountId: string, id: string, now: number) {
    return forAccount(db, accountId).selectFrom('browser_sessions').where('id', '=', id).where('ended_at', 'is', null).where('expires_at', '>', now)
  }

  /** The live session a cookie names, if any. */
  async find(accountId: string, cookie: string | undefined, now: number): Promise<BrowserSession | undefined> {
    const separator = cookie?.indexOf('.') ?? -1
    if (cookie === undefined || separator <= 0) return undefined
    const id = cookie.slice(0, separator)
    const row = await this.#live(this.db, accountId, id, now).selectAll().executeTakeFirst()
    if (!row || row.remembered !== 1 || !constantTimeEqual(row.secret_hash, secretDigest(cookie.slice(separator + 1)))) return undefined
    return { id: row.id, subject: row.subject, authTime: row.auth_time, acr: row.acr, amr: JSON.parse(row.amr) as string[], remembered: true, expiresAt: row.expires_at }
  }

  /** Starts session `id` (see newSessionId); answers the cookie value that names it. */
  async create(db: Kysely<DB>, accountId: string, id: string, session: NewSession, now: number): Promise<string> {
    const secret = randomToken()
    await forAccount(db, accountId)
      .insertInto('browser_sessions', {
        id,
        subject: session.subject,
        secret_hash: secretDigest(secret),
        auth_time: session.authTime,
        acr: session.acr,
        amr: JSON.stringify(session.amr),
        remembered: session.remembered ? 1 : 0,
        expires_at: session.expiresAt,
        ended_at: null,
        created_at: now,
        updated_at: now,
      })
      .execute()
    return `${id}.${secret}`
  }
}

/** A new session's id, chosen before the session is written so a flow can name it in the same transaction. */
export function newSessionId(now: number): string {
  return newId('ses', now)
}
