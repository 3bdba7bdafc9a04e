import type { Kysely, Updateable } from 'kysely'
import { sha256 } from '../../platform/crypto/random.js'
import type { Guard } from '../../platform/events/sql/guarded-events.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { AuthorizationFlowsTable, DB, FlowStage } from '../../platform/storage/schema.js'
import type { AuthorizationRequest } from './authorization-request.js'

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

export type NewFlow = Pick<AuthorizationFlowsTable, 'id' | 'client_id' | 'stage' | 'request' | 'browser' | 'challenge' | 'handle' | 'subject' | 'session_id' | 'login' | 'expires_at'>

export type FlowChanges = Omit<Updateable<AuthorizationFlowsTable>, 'id' | 'account_id' | 'client_id' | 'created_at'>

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

  async byId(accountId: string, id: string): Promise<Flow | undefined> {
    const row = await forAccount(this.db, accountId).selectFrom('authorization_flows').selectAll().where('id', '=', id).executeTakeFirst()
    return row && flowFromRow(row)
  }

  /** Moves `flow` on from the stage it was read in; false when another request moved it first. */
  async advance(db: Kysely<DB>, flow: Flow, changes: FlowChanges, now: number): Promise<boolean> {
    const result = await this.advancing(flow, changes, now)(db).executeTakeFirst()
    return result.numUpdatedRows === 1n
  }

  /** `advance` as a statement for the caller to run, with what must be written only if it moves the flow. */
  advancing(flow: Flow, changes: FlowChanges, now: number): Guard<'authorization_flows'> {
    return (db) => forAccount(db, flow.accountId).updateTable('authorization_flows').set({ ...changes, updated_at: now }).where('id', '=', flow.id).where('stage', '=', flow.stage)
  }
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
