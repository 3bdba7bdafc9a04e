import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { AccessTokenVerifier } from '../../platform/access-tokens/access-token-verifier.js'
import { INACTIVE_REASONS } from '../../platform/access-tokens/access-token-verifier.js'
import { OAuthError } from '../../platform/http/oauth-errors.js'
import { oauthErrorResponses } from '../../platform/http/schemas.js'
import type { App } from '../../platform/http/types.js'
import type { RegisteredClient } from '../clients/client-store.js'
import type { UserGrants } from '../grants/grant.js'
import { claimsForScopes } from '../grants/scope-claims.js'

export interface UserinfoRouteDeps {
  accessTokens: AccessTokenVerifier<RegisteredClient>
  grants: UserGrants
}

const UserinfoResponse = Type.Object(
  { sub: Type.String() },
  { additionalProperties: true, description: "The subject and the claims the consent gave, those of the token's scope (OpenID Connect Core §5.3.2, §5.4)" },
)

/** RFC 6750 §2.1's b64token; the scheme name is case-insensitive (RFC 9110 §11.1). */
const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i

/**
 * The UserInfo endpoint (OpenID Connect Core §5.3), GET and POST: a user's access token of this account, granted
 * `openid`, answers the subject and the claims the consent app gave for the ID token, as far as the token's own scope
 * asks for them (a token refreshed with less than the consent granted tells less). Errors are RFC 6750 §3's.
 */
export function userinfoRoutes(app: App, deps: UserinfoRouteDeps): void {
  const options = {
    config: { errorFormat: 'oauth' as const },
    schema: { summary: 'UserInfo (OpenID Connect Core §5.3)', security: [{ userAccessToken: [] }], response: { 200: UserinfoResponse, ...oauthErrorResponses } },
  }
  const handler = async (request: FastifyRequest) => userinfo(deps, request)
  app.get('/oauth/userinfo', options, handler)
  app.post('/oauth/userinfo', { ...options, bodyLimit: 1024 }, handler)
}

async function userinfo(deps: UserinfoRouteDeps, request: FastifyRequest): Promise<{ sub: string; [claim: string]: unknown }> {
  const { account, issuer } = request
  const header = request.headers.authorization
  const token = header === undefined ? undefined : BEARER.exec(header)?.[1]
  // RFC 6750 §3.1: a request without a token gets a bare challenge.
  if (token === undefined) throw new OAuthError('invalid_token', 'A Bearer access token is required', header === undefined ? 'Bearer' : bearerError('invalid_token', 'The Authorization header is not a Bearer token'))
  const verified = await deps.accessTokens.verify(account.id, token, { issuer })
  if (!verified.active) throw new OAuthError('invalid_token', INACTIVE_REASONS[verified.reason], bearerError('invalid_token', INACTIVE_REASONS[verified.reason]))
  const { claims } = verified
  const scopes = claims.scope.split(' ')
  if (claims.gid === undefined || !scopes.includes('openid')) {
    const description = 'The access token was not granted openid'
    throw new OAuthError('insufficient_scope', description, bearerError('insufficient_scope', description))
  }
  const grant = await deps.grants.byId(account.id, claims.gid)
  if (!grant) throw new OAuthError('invalid_token', 'The authorization of this token no longer exists', bearerError('invalid_token', 'The authorization no longer exists'))
  return { ...claimsForScopes(grant.consent.session.id_token, scopes), sub: claims.sub }
}

function bearerError(code: string, description: string): string {
  return `Bearer error="${code}", error_description="${description.replace(/["\\]/g, '')}"`
}
