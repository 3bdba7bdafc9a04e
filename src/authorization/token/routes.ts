import type { App } from '../../platform/http/types.js'
import { OAuthError } from '../../platform/http/oauth-errors.js'
import { type Awaitable, andThen } from '../../platform/cache/awaitable.js'
import type { AccountKeys } from '../../platform/keys/account-keys.js'
import type { KeyStore } from '../../platform/keys/key-store.js'
import type { JwtSigner } from '../../platform/keys/material.js'
import type { AccountSettings, SettingsStore } from '../../platform/settings/settings.js'
import type { Clock } from '../../platform/clock.js'
import { TurnBatch } from '../../platform/turn-batch.js'
import type { ClientAuthentication } from './client-authentication.js'
import type { RegisteredClient } from '../clients/client-store.js'
import { type GrantHandler, type Grants, tokenResponseJson } from './grants.js'
import { CLIENT_AUTHENTICATION, CLIENT_AUTHENTICATION_METHODS } from '../../platform/http/openapi.js'
import { oauthErrorResponses } from '../../platform/http/schemas.js'
import { OAUTH_BODY_LIMIT, TokenRequestBody, TokenResponseSchema, resourcesOf } from './token-request.js'

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

/**
 * Grants issue (and sign) at most this many tokens in one event-loop turn. A signature costs about 30 µs, so a
 * full turn holds the loop for about 2 ms, and the first answer of the turn waits that long for the last.
 */
const ISSUED_PER_TURN = 64

export interface TokenRouteDeps {
  clientAuthentication: ClientAuthentication
  settings: SettingsStore
  keys: KeyStore
  clock: Clock
  grants: Grants
  /** Told of each client that got a token: registered clients unused for long are pruned (see ClientUse). */
  clientUse: { note(client: RegisteredClient): void }
}

/**
 * The token endpoint (RFC 6749 §3.2), as a pipeline: authenticate the client, check the grant type is known
 * and allowed for it, then let the grant issue. Clients, settings and keys come from the caches, so issuing a
 * token reads nothing from the database.
 */
export function tokenRoutes(app: App, deps: TokenRouteDeps): void {
  const issuing = new TurnBatch(ISSUED_PER_TURN)
  app.post(
    '/oauth/tokens',
    {
      bodyLimit: OAUTH_BODY_LIMIT,
      config: { errorFormat: 'oauth' },
      schema: {
        summary: 'Token endpoint',
        security: CLIENT_AUTHENTICATION,
        ...CLIENT_AUTHENTICATION_METHODS,
        consumes: ['application/x-www-form-urlencoded'],
        body: TokenRequestBody,
        response: { 200: TokenResponseSchema, ...oauthErrorResponses },
      },
    },
    (request, reply) => {
      const { account, issuer, body } = request
      // RFC 6749 §5.1; error answers get the same headers from the error handler.
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache').header('referrer-policy', 'no-referrer')
      // With warm caches, every step up to the grant answers at once, without a promise (see andThen). The grant
      // then issues the token with the other requests read in this turn (see TurnBatch).
      const client = deps.clientAuthentication.authenticate(account.id, issuer, request.headers.authorization, body, true)
      // Asked for before the client is known, so that cold caches load the client, settings and keys in one turn.
      const context = signingContext(deps, account.id)
      if (context instanceof Promise) context.catch(() => {})
      return andThen(client, (authenticated) => {
        const grant = allowedGrant(deps.grants, authenticated, body.grant_type)
        return andThen(context, ({ settings, signer }) =>
          issuing.run(() => grant({ account, issuer, client: authenticated, settings, signer, body, resources: resourcesOf(body), nowMs: deps.clock.now() })).then((response) => {
            // Written by tokenResponseJson, under the content type Fastify's serializer path sets; only on success,
            // so an error answer is serialized by the error schemas as before.
            reply.type(JSON_CONTENT_TYPE).serializer(tokenResponseJson)
            deps.clientUse.note(authenticated)
            return response
          }),
        )
      })
    },
  )
}

/** The grant's handler, if Herald implements it and the client registered it. */
function allowedGrant(grants: Grants, client: RegisteredClient, grantType: string): GrantHandler {
  const grant = Object.hasOwn(grants, grantType) ? grants[grantType as keyof Grants] : undefined
  if (!grant) throw new OAuthError('unsupported_grant_type', 'This grant_type is not supported')
  if (!client.grantTypes.has(grantType)) throw new OAuthError('unauthorized_client', `This client may not use the ${grantType} grant`)
  return grant
}

interface SigningContext {
  settings: AccountSettings
  signer: JwtSigner
}

/** The account's settings and the key its access tokens are signed with now, from their caches. */
function signingContext(deps: TokenRouteDeps, accountId: string): Awaitable<SigningContext> {
  const settings = deps.settings.get(accountId)
  const keys = deps.keys.keysOf(accountId)
  if (settings instanceof Promise || keys instanceof Promise) {
    return Promise.all([settings, keys]).then(([loadedSettings, loadedKeys]) => withSigner(deps, loadedSettings, loadedKeys))
  }
  return withSigner(deps, settings, keys)
}

function withSigner(deps: TokenRouteDeps, settings: AccountSettings | undefined, keys: AccountKeys | undefined): Awaitable<SigningContext> {
  if (!settings) throw new OAuthError('server_error', 'The account has no settings')
  return andThen(keys?.signer(settings.access_token_signing_alg, deps.clock.now()), (signer) => {
    if (!signer) throw new OAuthError('server_error', 'The account has no signing key')
    return { settings, signer }
  })
}
