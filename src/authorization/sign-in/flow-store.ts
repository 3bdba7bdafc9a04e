import type { Kysely, Updateable } from 'kysely'
import { sha256 } from '../../platform/crypto/random.js'
import type { Guard } from '../../platform/events/sql/guarded-events.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import { inList } from '../../platform/storage/in-list.js'
import type { AuthorizationFlowsTable, DB, FlowStage } from '../../platform/storage/schema.js'
import type { AuthorizationRequest } from './authorization-request.js'
import { FLOW_MOVES, type InitialStage } from './flow-stages.js'

/** What the account's login app said when it accepted the login (the accept call's fields). */
export interface AcceptedLogin {
  /** Seconds since the epoch (OpenID Connect Core §2 `auth_time`). */
  auth_time: number
  acr: string | null
  amr: string[]
  remember: boolean
  remember_for: number | null
  context: Record<string, unknown> | null
}

/** Claims the consent app gave for the tokens of this authorization. */
export interface SessionClaims {
  id_token: Record<string, unknown>
  access_token: Record<string, unknown>
}

export interface AcceptedConsent {
  grant_scope: string[]
  grant_audience: string[]
  remember: boolean
  remember_for: number | null
  session: SessionClaims
}

export interface Rejection {
  error: string
  error_description: string
}

/** An authorization flow as the sign-in steps use it; JSON columns parsed. */
export interface Flow {
  id: string
  accountId: string
  clientId: string
  stage: FlowStage
  request: AuthorizationRequest
  browser: string | null
  /** The digest of what the browser or the client holds now: the request_uri, a verifier or the code. */
  handle: string | null
  subject: string | null
  sessionId: string | null
  login: AcceptedLogin | null
  consent: AcceptedConsent | null
  rejection: Rejection | null
  accessTokenJti: string | null
  accessTokenExpiresAt: number | null
  expiresAt: number
  /** Set once the grant is revoked. */
  revokedAt: number | null
}

export type NewFlow = Pick<AuthorizationFlowsTable, 'id' | 'client_id' | 'request' | 'browser' | 'challenge' | 'handle' | 'subject' | 'session_id' | 'login' | 'expires_at'> & { stage: InitialStage }

/** What a move writes besides the stage, which only `advance` sets (see flow-stages.ts). */
export type FlowChanges = Omit<Updateable<AuthorizationFlowsTable>, 'id' | 'account_id' | 'client_id' | 'created_at' | 'stage' | 'revoked_at'>

/** The flows still under way that `close` ends: a subject's (with one client), or those on some sessions. */
export type OpenFlows = { subject: string; clientId?: string } | { sessionIds: readonly string[] }

/** Where `close` moves the flows still under way. */
const CLOSED: FlowStage = 'done'

/** The digest a challenge, verifier, code or request_uri is stored and looked up as: the secret itself never is. */
export function secretDigest(secret: string): string {
  return sha256(secret).toString('base64url')
}

/**
 * The authorization flows of every account, one row per authorization request. A flow moves forward one stage at a
 * time, and only from the stage its reader saw (`advance`), so each challenge, verifier and code is used once even
 * when two requests race.
 */
export class FlowStore {
  constructor(private readonly db: Kysely<DB>) {}

  /** Starts a flow at its first stage; what later stages record starts empty. */
  async insert(db: Kysely<DB>, accountId: string, flow: NewFlow, now: number): Promise<void> {
    await forAccount(db, accountId)
      .insertInto('authorization_flows', {
        ...flow,
        consent: null,
        rejection: null,
        access_token_jti: null,
        access_token_expires_at: null,
        revoked_at: null,
        created_at: now,
        updated_at: now,
      })
      .execute()
  }

  /** The flow whose login or consent challenge this is. */
  async byChallenge(accountId: string, challenge: string): Promise<Flow | undefined> {
    const row = await forAccount(this.db, accountId).selectFrom('authorization_flows').selectAll().where('challenge', '=', secretDigest(challenge)).executeTakeFirst()
    return row && flowFromRow(row)
  }

  /** The flow whose request_uri, verifier or code this is. */
  async byHandle(accountId: string, handle: string): Promise<Flow | undefined> {
    const row = await forAccount(this.db, accountId).selectFrom('authorization_flows').selectAll().where('handle', '=', secretDigest(handle)).executeTakeFirst()
    return row && flowFromRow(row)
  }

  /** The flow with this id; with `stage`, only if it is in that stage. */
  async byId(accountId: string, id: string, stage?: FlowStage): Promise<Flow | undefined> {
    let query = forAccount(this.db, accountId).selectFrom('authorization_flows').selectAll().where('id', '=', id)
    if (stage !== undefined) query = query.where('stage', '=', stage)
    const row = await query.executeTakeFirst()
    return row && flowFromRow(row)
  }

  /** Moves `flow` on to `to` from the stage it was read in; false when another request moved it first. */
  async advance(db: Kysely<DB>, flow: Flow, to: FlowStage, changes: FlowChanges, now: number): Promise<boolean> {
    const result = await this.advancing(flow, to, changes, now)(db).executeTakeFirst()
    return result.numUpdatedRows === 1n
  }

  /** `advance` as a statement for the caller to run, with what must be written only if it moves the flow. */
  advancing(flow: Flow, to: FlowStage, changes: FlowChanges, now: number): Guard<'authorization_flows'> {
    FLOW_MOVES.assertMove(flow.stage, to)
    return (db) => forAccount(db, flow.accountId).updateTable('authorization_flows').set({ ...changes, stage: to, updated_at: now }).where('id', '=', flow.id).where('stage', '=', flow.stage)
  }

  /**
   * Closes flows still under way (`done`, `revoked_at` set), so none of them issues a code or tokens: their
   * challenges, verifiers and codes are refused from now on. Run it in the transaction that ends the session or
   * revokes the consent they relied on. Redeemed flows are grants, revoked apart (GrantRevocation). It moves only
   * the stages the table lets move to `done`, so the bulk write makes no move `advance` would refuse.
   */
  async close(db: Kysely<DB>, accountId: string, which: OpenFlows | 'all', now: number): Promise<void> {
    const closing = FLOW_MOVES.openStages(CLOSED)
    let query = forAccount(db, accountId).updateTable('authorization_flows').set({ stage: CLOSED, revoked_at: now, updated_at: now }).where('stage', 'in', closing)
    if (which !== 'all' && 'sessionIds' in which) {
      if (which.sessionIds.length === 0) return
      query = query.where('session_id', 'in', inList(which.sessionIds))
    } else if (which !== 'all') {
      query = query.where('subject', '=', which.subject)
      if (which.clientId !== undefined) query = query.where('client_id', '=', which.clientId)
    }
    await query.execute()
  }
}

/** Whether `close` ended the flow (its session ended, its consent was revoked, its account was disabled). */
export function isClosed(flow: Flow): boolean {
  return flow.stage === CLOSED && flow.revokedAt !== null
}

function parsed<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T)
}

/** A stored flow, its JSON columns parsed; for queries that read flows joined to other rows. */
export function flowFromRow(row: AuthorizationFlowsTable): Flow {
  return {
    id: row.id,
    accountId: row.account_id,
    clientId: row.client_id,
    stage: row.stage,
    request: JSON.parse(row.request) as AuthorizationRequest,
    browser: row.browser,
    handle: row.handle,
    subject: row.subject,
    sessionId: row.session_id,
    login: parsed<AcceptedLogin>(row.login),
    consent: parsed<AcceptedConsent>(row.consent),
    rejection: parsed<Rejection>(row.rejection),
    accessTokenJti: row.access_token_jti,
    accessTokenExpiresAt: row.access_token_expires_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
  }
}
