import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Clock } from '../../platform/clock.js'
import type { App } from '../../platform/http/types.js'
import type { SettingsStore } from '../../platform/settings/settings.js'
import type { RegisteredClient } from '../clients/client-store.js'
import { ClientDocumentError } from '../client-documents/client-document-error.js'
import type { ClientFinder } from '../client-documents/client-lookup.js'
import { OAUTH_BODY_LIMIT } from '../token/token-request.js'
import { type RawParameters, UntrustedRequestError, trustedTarget, untrustedSingle, validateRequest } from './authorization-request.js'
import type { AuthorizeFlow, BrowserContext } from './authorize-flow.js'
import { answerInBrowser } from './browser-endpoint.js'
import type { FlowStore } from './flow-store.js'
import type { Navigation } from './navigation.js'
import { pushedFlow } from './pushed-requests.js'

export interface AuthorizeRouteDeps {
  clients: ClientFinder
  settings: SettingsStore
  flows: FlowStore
  authorizeFlow: AuthorizeFlow
  clock: Clock
}

const AuthorizeParameters = Type.Object(
  {
    response_type: Type.Optional(Type.String({ description: '`code`' })),
    client_id: Type.Optional(Type.String()),
    redirect_uri: Type.Optional(Type.String({ description: "Exactly as registered; a native app's loopback IP URI may change its port (RFC 8252 §7.3)" })),
    scope: Type.Optional(Type.String()),
    state: Type.Optional(Type.String()),
    nonce: Type.Optional(Type.String()),
    code_challenge: Type.Optional(Type.String({ description: 'PKCE (RFC 7636), S256 only' })),
    code_challenge_method: Type.Optional(Type.String({ description: '`S256`' })),
    response_mode: Type.Optional(Type.String({ description: '`query` (default) or `form_post`' })),
    prompt: Type.Optional(Type.String({ description: '`none`, `login` or `consent`' })),
    max_age: Type.Optional(Type.String()),
    login_hint: Type.Optional(Type.String()),
    acr_values: Type.Optional(Type.String()),
    ui_locales: Type.Optional(Type.String()),
    resource: Type.Optional(Type.String({ description: 'RFC 8707 resource indicator' })),
    request_uri: Type.Optional(Type.String({ description: 'A pushed request (RFC 9126)' })),
    login_verifier: Type.Optional(Type.String({ description: "Set by Herald in the login app's `redirect_to`" })),
    consent_verifier: Type.Optional(Type.String({ description: "Set by Herald in the consent app's `redirect_to`" })),
  },
  { additionalProperties: true },
)

const BROWSER_RESPONSES = {
  302: { description: "To the account's login or consent app, or to the client's redirect_uri with `code` (or `error`), `state` and `iss`" },
  303: { description: 'The same, after a POST' },
  400: {
    description: 'A request that cannot be answered at a verified redirect_uri, unless the account has an error_url',
    content: { 'text/plain': { schema: { type: 'string' } } },
  },
}

/**
 * The authorization endpoint (RFC 6749 §3.1, OpenID Connect Core §3.1.2), GET and POST alike. It never renders a
 * login page: it records the request and sends the browser to the account's login app (see AuthorizeFlow).
 */
export function authorizeRoutes(app: App, deps: AuthorizeRouteDeps): void {
  const schema = { summary: 'Authorization endpoint (authorization code with PKCE)', response: BROWSER_RESPONSES }
  const config = { errorFormat: 'browser' as const }
  app.get('/oauth/authorize', { config, schema: { ...schema, querystring: AuthorizeParameters } }, (request, reply) => authorize(deps, request, reply, request.query))
  app.post('/oauth/authorize', { config, bodyLimit: OAUTH_BODY_LIMIT, schema: { ...schema, consumes: ['application/x-www-form-urlencoded'], body: AuthorizeParameters } }, (request, reply) =>
    authorize(deps, request, reply, request.body),
  )
}

async function authorize(deps: AuthorizeRouteDeps, request: FastifyRequest, reply: FastifyReply, params: RawParameters): Promise<FastifyReply> {
  return answerInBrowser(deps, request, reply, (context) => next(deps, context, params))
}

/** The step the parameters call for: a new request (or a pushed one), or the way back from the login or consent app. */
async function next(deps: AuthorizeRouteDeps, context: BrowserContext, params: RawParameters): Promise<Navigation> {
  const loginVerifier = untrustedSingle(params, 'login_verifier')
  if (loginVerifier !== undefined) return deps.authorizeFlow.afterLogin(context, loginVerifier)
  const consentVerifier = untrustedSingle(params, 'consent_verifier')
  if (consentVerifier !== undefined) return deps.authorizeFlow.afterConsent(context, consentVerifier)

  const clientId = untrustedSingle(params, 'client_id')
  if (clientId === undefined) throw new UntrustedRequestError('invalid_request', 'client_id is required')
  const client = await findClient(deps, context, clientId)
  const requestUri = untrustedSingle(params, 'request_uri')
  if (requestUri !== undefined) {
    if (!client) throw new UntrustedRequestError('invalid_request', 'client_id does not name a client of this account')
    const pushed = await pushedFlow(deps.flows, context, client.id, requestUri)
    return deps.authorizeFlow.start(context, client, pushed.request, pushed)
  }
  const target = trustedTarget(params, client)
  return deps.authorizeFlow.start(context, client!, validateRequest(params, client!, target, context.settings, false))
}

/** A client_id whose metadata document can't be used is answered on the error page, never at the document's URIs. */
async function findClient(deps: AuthorizeRouteDeps, context: BrowserContext, clientId: string): Promise<RegisteredClient | undefined> {
  try {
    return await deps.clients.find(context.account.id, clientId)
  } catch (error) {
    if (error instanceof ClientDocumentError) throw new UntrustedRequestError('invalid_client', error.message)
    throw error
  }
}
