import { ProblemError } from '../../platform/http/problems.js'
import { isReservedScope } from '../../platform/management-auth/scopes.js'

/**
 * The scope ceiling: a management token may give a client, and may change a client holding, only `herald:` scopes
 * that the token itself carries. What counts is the token's `scope`, since that is what its bearer proved, as far
 * as its client is still allowed it (see ManagementAuth); the original management client's full token carries them
 * all. Without this, `herald:clients:write` alone
 * could make a client with any scope, or take over a stronger client by changing or rotating its credentials.
 */
export function checkScopeCeiling(held: ReadonlySet<string>, scopes: Iterable<string>): void {
  const beyond = [...new Set([...scopes].filter((scope) => isReservedScope(scope) && !held.has(scope)))]
  if (beyond.length > 0) {
    throw new ProblemError('insufficient_scope', `The access token lacks ${beyond.join(' ')}; a token can give a client, or change a client that holds, only reserved scopes it holds`)
  }
}
