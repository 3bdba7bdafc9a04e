import { type ActorClaim, MAX_DELEGATION_DEPTH } from '../../platform/access-tokens/access-token-verifier.js'
import { OAuthError } from '../../platform/http/oauth-errors.js'
import type { RegisteredClient } from '../clients/client-store.js'
import { grantedScopes } from './scope-policy.js'

/** RFC 8693 §3: the token types a token exchange reads or issues. */
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token'
export const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token'

/** The subject token of an exchange, as far as the new token's limits depend on it. */
export interface ExchangeSubject {
  tokenType: typeof ACCESS_TOKEN_TYPE | typeof ID_TOKEN_TYPE
  subject: string
  /** Its expiry, epoch seconds: the new token never outlives it. */
  exp: number
  /** The scopes it carries; an ID token carries none, and leaves only the client's as the ceiling. */
  scopes: readonly string[] | undefined
  /** Its `jti`: an access token can be revoked, an ID token can't. */
  jti: string | undefined
  /** The user's grant it was issued under, which the new token carries too. */
  grantId: string | undefined
  /** Who acts for the subject already, when it was itself exchanged. */
  act: ActorClaim | undefined
  /** The tokens it was exchanged from, the nearest first. */
  sjti: readonly string[]
  /** RFC 8693 §4.4, as the token gave it. */
  mayAct: unknown
}

/**
 * RFC 8693 §4.1: the new token's `act` names the acting party (`actor`: the subject of the actor token, or the client
 * itself) and nests the subject token's own `act` under it, so a delegation chain reads from the latest actor back. A
 * client registered for impersonation gets none.
 */
export function actorClaim(client: RegisteredClient, actor: string, subject: ExchangeSubject): ActorClaim | undefined {
  if (client.metadata.token_exchange_impersonation) return undefined
  return { sub: actor, ...(actor !== client.id && { client_id: client.id }), ...(subject.act && { act: subject.act }) }
}

/** The tokens the new one is exchanged from, the subject token first: revoking any of them revokes it. */
export function exchangedFrom(subject: ExchangeSubject): readonly string[] {
  return subject.jti === undefined ? subject.sjti : [subject.jti, ...subject.sjti]
}

/** Refuses a chain deeper than access tokens may carry (see MAX_DELEGATION_DEPTH). */
export function checkDepth(act: ActorClaim | undefined, sjti: readonly string[]): void {
  let depth = 0
  for (let actor = act; actor; actor = actor.act) depth++
  if (depth > MAX_DELEGATION_DEPTH || sjti.length > MAX_DELEGATION_DEPTH) {
    throw new OAuthError('invalid_request', `The subject_token was exchanged too many times over (at most ${MAX_DELEGATION_DEPTH})`)
  }
}

/**
 * RFC 8693 §4.4: a subject token with `may_act` may be exchanged only by the party it names. Herald compares its `sub`
 * with the actor and its `client_id` with the client; a `may_act` naming neither can't be honoured, so it refuses.
 */
export function checkMayAct(mayAct: unknown, actor: string, client: RegisteredClient): void {
  if (mayAct === undefined) return
  const { sub, client_id: clientId } = typeof mayAct === 'object' && mayAct !== null ? (mayAct as Record<string, unknown>) : {}
  const named = typeof sub === 'string' || typeof clientId === 'string'
  if (!named || (sub !== undefined && sub !== actor) || (clientId !== undefined && clientId !== client.id)) {
    throw new OAuthError('invalid_request', "The subject_token's may_act does not name this actor")
  }
}

/**
 * The scopes of the new token: those requested, each allowed to the client (grantedScopes) and carried by the subject
 * token; none requested means all the two have in common. Never more than the subject token had.
 */
export function exchangedScopes(client: RegisteredClient, subjectScopes: readonly string[] | undefined, requested: string | undefined): readonly string[] {
  const scopes = grantedScopes(client, requested)
  if (subjectScopes === undefined) return scopes
  if (requested === undefined || requested.trim() === '') return scopes.filter((name) => subjectScopes.includes(name))
  const beyond = scopes.filter((name) => !subjectScopes.includes(name))
  if (beyond.length > 0) throw new OAuthError('invalid_scope', `The subject_token does not carry: ${beyond.join(' ')}`)
  return scopes
}
