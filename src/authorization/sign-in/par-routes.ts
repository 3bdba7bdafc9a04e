import type { Kysely } from 'kysely'
import { Type } from 'typebox'
import type { Clock } from '../../platform/clock.js'
import { OAuthError } from '../../platform/http/oauth-errors.js'
import type { App } from '../../platform/http/types.js'
import type { SettingsStore } from '../../platform/settings/settings.js'
import type { DB } from '../../platform/storage/schema.js'
import type { ClientAuthentication } from '../token/client-authentication.js'
import { clientAuthenticatedRoute, noStore } from '../token/client-authenticated-route.js'
import { ClientCredentialFields } from '../token/token-request.js'
import { AuthorizationError, UntrustedRequestError, trustedTarget, validateRequest } from './authorization-request.js'
import type { FlowStore } from './flow-store.js'
import { PAR_TTL_SECONDS, pushRequest } from './pushed-requests.js'

export interface ParRouteDeps {
  db: Kysely<DB>
  clientAuthentication: ClientAuthentication
  settings: SettingsStore
  flows: FlowStore
  clock: Clock
}

const ParBody = Type.Object(ClientCredentialFields, { additionalProperties: true, description: 'The authorization request parameters, and the client authentication' })
const ParResponse = Type.Object({ request_uri: Type.String(), expires_in: Type.Integer() }, { description: 'RFC 9126 §2.2' })

/**
 * Pushed authorization requests (RFC 9126): the client sends its authorization request straight to Herald,
 * authenticated like at the token endpoint, and gets a single-use request_uri for the browser's trip to authorize.
 * The request is validated here exactly as authorize would, and its errors are answered here (§2.3).
 */
export function parRoutes(app: App, deps: ParRouteDeps): void {
  app.post('/oauth/par', clientAuthenticatedRoute('Pushed authorization request (RFC 9126)', ParBody, { 201: ParResponse }), async (request, reply) => {
    const { account, issuer, body } = request
    noStore(reply)
    const client = await deps.clientAuthentication.authenticate(account.id, issuer, request.headers.authorization, body, true)
    if (Object.hasOwn(body, 'request_uri')) throw new OAuthError('invalid_request', 'request_uri cannot be pushed (RFC 9126 §2.1)')
    const settings = await deps.settings.get(account.id)
    if (!settings) throw new OAuthError('server_error', 'The account has no settings')
    let validated
    try {
      validated = validateRequest(body, client, trustedTarget(body, client), settings, true)
    } catch (error) {
      if (error instanceof AuthorizationError || error instanceof UntrustedRequestError) throw new OAuthError(error.code, error.description)
      throw error
    }
    const requestUri = await pushRequest(deps.db, deps.flows, account.id, validated, deps.clock.now())
    return reply.status(201).send({ request_uri: requestUri, expires_in: PAR_TTL_SECONDS })
  })
}
