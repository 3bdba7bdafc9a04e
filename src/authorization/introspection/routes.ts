import { Type } from 'typebox'
import type { AccessTokenVerifier } from '../../platform/access-tokens/access-token-verifier.js'
import type { App } from '../../platform/http/types.js'
import type { RegisteredClient } from '../clients/client-store.js'
import { TokenHintBody } from '../revocation/token-hint.js'
import { clientAuthenticatedRoute, noStore } from '../token/client-authenticated-route.js'
import type { ClientAuthentication } from '../token/client-authentication.js'
import { introspectionResponse } from './introspection.js'

export interface IntrospectionRouteDeps {
  clientAuthentication: ClientAuthentication
  accessTokens: AccessTokenVerifier<RegisteredClient>
}

const IntrospectionResponseSchema = Type.Object(
  {
    active: Type.Boolean(),
    scope: Type.Optional(Type.String()),
    client_id: Type.Optional(Type.String()),
    token_type: Type.Optional(Type.Literal('Bearer')),
    exp: Type.Optional(Type.Integer()),
    iat: Type.Optional(Type.Integer()),
    sub: Type.Optional(Type.String()),
    aud: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
    iss: Type.Optional(Type.String()),
    jti: Type.Optional(Type.String()),
    act: Type.Optional(
      Type.Object(
        { sub: Type.String(), client_id: Type.Optional(Type.String()) },
        { additionalProperties: true, description: 'An exchanged token: who acts for the subject; a nested `act` names who acted before (RFC 8693 §4.1)' },
      ),
    ),
  },
  { description: 'Whether the token is active and, if it is, its claims (RFC 7662 §2.2)' },
)

/**
 * The introspection endpoint (RFC 7662), as a pipeline: authenticate the caller (any client of the account, the
 * resource servers among them), then verify the token by exactly the rules management auth applies. The answer
 * is never cached (§2.2 lets a token's state change at any moment).
 */
export function introspectionRoutes(app: App, deps: IntrospectionRouteDeps): void {
  app.post(
    '/oauth/introspect',
    clientAuthenticatedRoute('Token introspection (RFC 7662): any authenticated client of the account may ask', TokenHintBody, { 200: IntrospectionResponseSchema }),
    async (request, reply) => {
      const { account, issuer, body } = request
      await deps.clientAuthentication.authenticate(account.id, issuer, request.headers.authorization, body)

      const verified = await deps.accessTokens.verify(account.id, body.token, { issuer })
      if (!verified.active) request.log.debug({ reason: verified.reason }, 'introspected an inactive token')
      return noStore(reply).send(introspectionResponse(verified))
    },
  )
}
