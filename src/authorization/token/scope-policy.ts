import { OAuthError } from '../../platform/http/oauth-errors.js'
import { isReservedScope } from '../../platform/management-auth/scopes.js'
import type { RegisteredClient } from '../clients/client-store.js'

/** RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/

export function isValidScopeToken(value: string): boolean {
  return SCOPE_TOKEN.test(value)
}

/**
 * The scopes a token gets: exactly those requested, each of which the client must be allowed; none requested
 * means the client's whole set. An unknown or unallowed scope is an error, never silently dropped.
 */
export function grantedScopes(client: RegisteredClient, requested: string | undefined): readonly string[] {
  if (requested === undefined || requested.trim() === '') return client.scopes
  // Scope lists are short: scanning arrays costs less than building sets on every token request.
  const names: string[] = []
  const refused: string[] = []
  let reserved = false
  for (const name of requested.split(' ')) {
    if (name === '' || names.includes(name)) continue
    if (!isValidScopeToken(name)) throw new OAuthError('invalid_scope', 'scope is not a space-separated list of scope tokens')
    names.push(name)
    if (!client.scopes.includes(name)) refused.push(name)
    reserved ||= isReservedScope(name)
  }
  if (refused.length > 0) throw new OAuthError('invalid_scope', `The client may not request: ${refused.join(' ')}`)
  if (reserved && client.kind !== 'management') {
    throw new OAuthError('invalid_scope', 'herald: scopes are granted only to management clients')
  }
  return names
}

/**
 * The granted scopes the client may still request: a user's grant follows its client, so a scope taken from the
 * client is gone from the grant's next token (and, through rotation, from every later one).
 */
export function stillAllowed(client: RegisteredClient, granted: readonly string[]): string[] {
  return granted.filter((name) => client.scopes.includes(name))
}
