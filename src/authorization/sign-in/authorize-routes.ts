import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Clock } from '../../platform/clock.js'
import { randomToken } from '../../platform/crypto/random.js'
import type { App } from '../../platform/http/types.js'
import type { AccountSettings, SettingsStore } from '../../platform/settings/settings.js'
import type { ClientStore } from '../clients/client-store.js'
import { OAUTH_BODY_LIMIT } from '../token/token-request.js'
import { AuthorizationError, type RawParameters, UntrustedRequestError, trustedTarget, untrustedSingle, validateRequest } from './authorization-request.js'
import type { AuthorizeFlow, BrowserContext } from './authorize-flow.js'
import { readCookies, setCookieHeader } from './cookies.js'
import type { FlowStore } from './flow-store.js'
import { type Navigation, toClient, withQuery } from './navigation.js'
import { pushedFlow } from './pushed-requests.js'

export interface AuthorizeRouteDeps {
  clients: ClientStore
  settings: SettingsStore
  flows: FlowStore
  authorizeFlow: AuthorizeFlow
  clock: Clock
}

const AuthorizeParameters = Type.Object(
  {
    response_type: Type.Optional(Type.String({ description: '`code`' })),
    client_id: Type.Optional(Type.String()),
    redirect_uri: Type.Optional(Type.String({ description: 'Exactly as registered; a loopback URI may change its port (RFC 8252 §7.3)' })),
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
  const schema = { summary: 'Authorization endpoint (authorization code with PKCE)', tags: ['oauth'], response: BROWSER_RESPONSES }
  const config = { errorFormat: 'browser' as const }
  app.get('/oauth/authorize', { config, schema: { ...schema, querystring: AuthorizeParameters } }, (request, reply) => authorize(deps, request, reply, request.query))
  app.post('/oauth/authorize', { config, bodyLimit: OAUTH_BODY_LIMIT, schema: { ...schema, consumes: ['application/x-www-form-urlencoded'], body: AuthorizeParameters } }, (request, reply) =>
    authorize(deps, request, reply, request.body),
  )
}

async function authorize(deps: AuthorizeRouteDeps, request: FastifyRequest, reply: FastifyReply, params: RawParameters): Promise<FastifyReply> {
  browserFacing(reply)
  const { account, issuer } = request
  const settings = await deps.settings.get(account.id)
  if (!settings) throw new Error('An account without settings')
  const context: BrowserContext = { account, issuer, settings, cookies: readCookies(request.headers.cookie), now: deps.clock.now() }
  const post = request.method === 'POST'
  try {
    return send(reply, await next(deps, context, params), issuer, post)
  } catch (error) {
    if (error instanceof AuthorizationError) {
      return send(reply, toClient(error.target, issuer, { error: error.code, error_description: error.description }), issuer, post)
    }
    if (error instanceof UntrustedRequestError) return sendUntrusted(reply, settings, error, post)
    throw error
  }
}

/** The step the parameters call for: a new request (or a pushed one), or the way back from the login or consent app. */
async function next(deps: AuthorizeRouteDeps, context: BrowserContext, params: RawParameters): Promise<Navigation> {
  const loginVerifier = untrustedSingle(params, 'login_verifier')
  if (loginVerifier !== undefined) return deps.authorizeFlow.afterLogin(context, loginVerifier)
  const consentVerifier = untrustedSingle(params, 'consent_verifier')
  if (consentVerifier !== undefined) return deps.authorizeFlow.afterConsent(context, consentVerifier)

  const clientId = untrustedSingle(params, 'client_id')
  if (clientId === undefined) throw new UntrustedRequestError('invalid_request', 'client_id is required')
  const client = await deps.clients.find(context.account.id, clientId)
  const requestUri = untrustedSingle(params, 'request_uri')
  if (requestUri !== undefined) {
    if (!client) throw new UntrustedRequestError('invalid_request', 'client_id does not name a client of this account')
    const pushed = await pushedFlow(deps.flows, context, client.id, requestUri)
    return deps.authorizeFlow.start(context, client, pushed.request, pushed)
  }
  const target = trustedTarget(params, client)
  return deps.authorizeFlow.start(context, client!, validateRequest(params, client!, target, context.settings, false))
}

/**
 * RFC 9700 §4.11 and §4.16: no caching, no referrer leaking codes, no framing (clickjacking); authorize never
 * answers CORS.
 */
export function browserFacing(reply: FastifyReply): void {
  reply
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
    .header('content-security-policy', "frame-ancestors 'none'")
}

export function send(reply: FastifyReply, navigation: Navigation, issuer: string, post: boolean): FastifyReply {
  if (navigation.cookies.length > 0) reply.header('set-cookie', navigation.cookies.map((cookie) => setCookieHeader(issuer, cookie)))
  if (navigation.kind === 'redirect') return reply.redirect(navigation.location, post ? 303 : 302)
  if (navigation.kind === 'page') return reply.type('text/plain; charset=utf-8').send(navigation.text)
  // OAuth 2.0 Form Post Response Mode §2: a page that posts the response to the client at once.
  const nonce = randomToken(16)
  reply.header('content-security-policy', `default-src 'none'; script-src 'nonce-${nonce}'; frame-ancestors 'none'`)
  const inputs = Object.entries(navigation.fields).map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
  const page = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Signing in</title></head><body><form method="post" action="${escapeHtml(navigation.action)}">${inputs.join('')}<noscript><button type="submit">Continue</button></noscript></form><script nonce="${nonce}">document.forms[0].submit()</script></body></html>`
  return reply.type('text/html; charset=utf-8').send(page)
}

/**
 * An error that can't go to the client: to the account's error page if it has one, else a plain answer. Nothing
 * from the request is echoed, so the page can't be used to show an attacker's text.
 */
export function sendUntrusted(reply: FastifyReply, settings: AccountSettings | undefined, error: UntrustedRequestError, post: boolean): FastifyReply {
  if (settings?.error_url) return reply.redirect(withQuery(settings.error_url, { error: error.code, error_description: error.description }), post ? 303 : 302)
  return reply.status(400).type('text/plain; charset=utf-8').send(`${error.code}: ${error.description}\n`)
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char]!)
}
