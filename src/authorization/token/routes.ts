import type { App } from '../../platform/http/types.js'
import { OAuthError } from '../../platform/http/oauth-errors.js'
import type { KeyStore } from '../../platform/keys/key-store.js'
import type { SettingsStore } from '../../platform/settings/settings.js'
import type { Clock } from '../../platform/clock.js'
import type { ClientAuthentication } from './client-authentication.js'
import { GRANTS } from './grants.js'
import { OAUTH_BODY_LIMIT, OAuthErrorSchema, TokenRequestBody, TokenResponseSchema, resourcesOf } from './token-request.js'

export interface TokenRouteDeps {
  clientAuthentication: ClientAuthentication
  settings: SettingsStore
  keys: KeyStore
  clock: Clock
}

/**
 * The token endpoint (RFC 6749 §3.2), as a pipeline: authenticate the client, check the grant type is known
 * and allowed for it, then let the grant issue. Clients, settings and keys come from the caches, so issuing a
 * token reads nothing from the database.
 */
export function tokenRoutes(app: App, deps: TokenRouteDeps): void {
  app.post(
    '/oauth/tokens',
    {
      bodyLimit: OAUTH_BODY_LIMIT,
      config: { errorFormat: 'oauth' },
      schema: {
        summary: 'Token endpoint',
        tags: ['oauth'],
        consumes: ['application/x-www-form-urlencoded'],
        body: TokenRequestBody,
        response: { 200: TokenResponseSchema, 400: OAuthErrorSchema, 401: OAuthErrorSchema },
      },
    },
    async (request, reply) => {
      const { account, issuer, body } = request
      const client = await deps.clientAuthentication.authenticate(account.id, issuer, request.headers.authorization, body)

      const grant = GRANTS[body.grant_type]
      if (!grant) throw new OAuthError('unsupported_grant_type', 'This grant_type is not supported')
      if (!client.grantTypes.has(body.grant_type)) {
        throw new OAuthError('unauthorized_client', `This client may not use the ${body.grant_type} grant`)
      }

      const [settings, keys] = await Promise.all([deps.settings.get(account.id), deps.keys.keysOf(account.id)])
      if (!settings) throw new OAuthError('server_error', 'The account has no settings')
      const response = await grant({ account, issuer, client, settings, keys, body, resources: resourcesOf(body), nowMs: deps.clock.now() })
      return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(response)
    },
  )
}
