import type { ActorClaim, Verification } from '../../platform/access-tokens/access-token-verifier.js'

/** RFC 7662 §2.2, with the members Herald's access tokens carry. */
export type IntrospectionResponse =
  | { active: false }
  | {
      active: true
      scope: string
      client_id: string
      token_type: 'Bearer'
      exp: number
      iat: number
      sub: string
      aud: string | string[]
      iss: string
      jti: string
      /** RFC 8693 §4.1 (and RFC 7662 §2.2's room for more): who acts for the subject of an exchanged token. */
      act?: ActorClaim
    }

/**
 * The answer for a verified token. An inactive token says nothing more, whatever the reason: RFC 7662 §2.2
 * lets the server reveal no detail, and a caller must not learn why another client's token is dead.
 */
export function introspectionResponse(verification: Verification<unknown>): IntrospectionResponse {
  if (!verification.active) return { active: false }
  const { scope, client_id, exp, iat, sub, aud, iss, jti, act } = verification.claims
  return { active: true, scope, client_id, token_type: 'Bearer', exp, iat, sub, aud, iss, jti, ...(act && { act }) }
}
