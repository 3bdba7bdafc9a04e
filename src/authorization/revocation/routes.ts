import { Type } from 'typebox'
import type { AccessTokenVerifier } from '../../platform/access-tokens/access-token-verifier.js'
import type { Clock } from '../../platform/clock.js'
import type { App } from '../../platform/http/types.js'
import type { RegisteredClient } from '../clients/client-store.js'
import type { ClientAuthentication } from '../token/client-authentication.js'
import { clientAuthenticatedRoute } from '../token/client-authenticated-route.js'
import type { GrantRevocation } from '../grants/grant-revocation.js'
import type { TokenRevocations } from './revocation-store.js'
import { TokenHintBody } from './token-hint.js'

export interface RevocationRouteDeps {
  clientAuthentication: ClientAuthentication
  accessTokens: AccessTokenVerifier<RegisteredClient>
  revocations: TokenRevocations
  grantRevocation: Pick<GrantRevocation, 'revokeRefreshToken'>
  clock: Clock
}

/**
 * The revocation endpoint (RFC 7009), as a pipeline: authenticate the client, verify the token as every consumer
 * does, and record its `jti` only if it is active and was issued to this very client (RFC 7009 §2.1). Every
 * other token (malformed, another account's, expired, already revoked, another client's) is answered 200 and
 * left alone: §2.2 says invalid tokens cause no error, and a distinct answer would tell a client which tokens of
 * other clients are valid. A refresh token revokes its whole grant: every access and refresh token of the same
 * authorization (RFC 7009 §2.1 allows it, and the grant's tokens are one credential to the user).
 */
export function revocationRoutes(app: App, deps: RevocationRouteDeps): void {
  app.post(
    '/oauth/revoke',
    clientAuthenticatedRoute('Token revocation (RFC 7009): only the client the token was issued to may revoke it', TokenHintBody, {
      // RFC 7009 §2.2: the body is empty and the client ignores it.
      200: Type.Unsafe<undefined>({ type: 'null', description: 'The token is revoked, or there was nothing this client could revoke' }),
    }),
    async (request, reply) => {
      const { account, issuer, body } = request
      const client = await deps.clientAuthentication.authenticate(account.id, issuer, request.headers.authorization, body, true)

      // A refresh token is opaque, an access token a JWS: the token's form tells them apart whatever the hint says.
      if (!body.token.includes('.')) {
        const revoked = await deps.grantRevocation.revokeRefreshToken(account.id, client.id, body.token, deps.clock.now())
        if (!revoked) request.log.debug('revocation request changed nothing')
        return reply.header('cache-control', 'no-store').code(200).send()
      }
      const verified = await deps.accessTokens.verify(account.id, body.token, { issuer })
      if (verified.active && verified.claims.client_id === client.id) {
        const { jti, exp } = verified.claims
        await deps.revocations.revoke(account.id, { jti, clientId: client.id, expiresAt: exp * 1000 }, deps.clock.now())
      } else {
        request.log.debug({ reason: verified.active ? 'another_client' : verified.reason }, 'revocation request changed nothing')
      }
      return reply.header('cache-control', 'no-store').code(200).send()
    },
  )
}
