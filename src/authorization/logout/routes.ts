import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Clock } from '../../platform/clock.js'
import { named, problemResponses, ref } from '../../platform/http/schemas.js'
import type { App } from '../../platform/http/types.js'
import type { SettingsStore } from '../../platform/settings/settings.js'
import { OAUTH_BODY_LIMIT } from '../token/token-request.js'
import { type RawParameters, untrustedSingle } from '../sign-in/authorization-request.js'
import { answerInBrowser } from '../sign-in/browser-endpoint.js'
import type { Logouts } from './logouts.js'

export interface LogoutRouteDeps {
  logouts: Logouts
  settings: SettingsStore
  clock: Clock
}

const LogoutParameters = Type.Object(
  {
    id_token_hint: Type.Optional(Type.String({ description: 'An ID token Herald issued to the client (expired ones too)' })),
    client_id: Type.Optional(Type.String()),
    post_logout_redirect_uri: Type.Optional(Type.String({ description: "One of the client's post_logout_redirect_uris, exactly" })),
    state: Type.Optional(Type.String()),
    ui_locales: Type.Optional(Type.String()),
    logout_verifier: Type.Optional(Type.String({ description: "Set by Herald in the logout app's `redirect_to`" })),
  },
  { additionalProperties: true },
)

const LOGOUT_RESPONSES = {
  200: { description: "Herald's own page saying how the logout ended, when neither the client nor the account has a page to go to", content: { 'text/html': { schema: { type: 'string' } } } },
  302: { description: "To the account's logout app; once done, to the client's post_logout_redirect_uri with `state`, or the account's post_logout_url" },
  303: { description: 'The same, after a POST' },
  400: { description: 'A request Herald cannot act on, unless the account has an error_url', content: { 'text/plain': { schema: { type: 'string' } } } },
}

const LogoutRequestSchema = named(
  'LogoutRequest',
  Type.Object(
    {
      challenge: Type.String(),
      subject: Type.Union([Type.String(), Type.Null()]),
      session_id: Type.Union([Type.String(), Type.Null()]),
      client_id: Type.Union([Type.String(), Type.Null()]),
      ui_locales: Type.Array(Type.String()),
      rp_initiated: Type.Literal(true),
    },
    { description: 'A logout waiting for the logout app' },
  ),
)
const LogoutAnswerSchema = named('LogoutAnswer', Type.Object({ redirect_to: Type.String({ description: 'Where the app sends the browser next' }) }))
export const logoutSchemas = [LogoutRequestSchema, LogoutAnswerSchema]
const Challenge = Type.Object({ challenge: Type.String({ minLength: 1, maxLength: 128 }) })

/** The end-session endpoint (OpenID Connect RP-Initiated Logout 1.0 §2), GET and POST, in the browser. */
export function logoutRoutes(app: App, deps: LogoutRouteDeps): void {
  const schema = { summary: 'RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0)', response: LOGOUT_RESPONSES }
  const config = { errorFormat: 'browser' as const }
  app.get('/oauth/logout', { config, schema: { ...schema, querystring: LogoutParameters } }, (request, reply) => logout(deps, request, reply, request.query))
  app.post('/oauth/logout', { config, bodyLimit: OAUTH_BODY_LIMIT, schema: { ...schema, consumes: ['application/x-www-form-urlencoded'], body: LogoutParameters } }, (request, reply) =>
    logout(deps, request, reply, request.body),
  )
}

/** The logout app's API, beside the login app's (`herald:login`). */
export function logoutRequestRoutes(app: App, logouts: Logouts): void {
  const config = { scope: 'herald:login' as const }
  const base = '/oauth/logout-requests/:challenge'
  app.get(base, { config, schema: { summary: 'A logout waiting for the account\'s app', params: Challenge, response: { 200: ref(LogoutRequestSchema, 'The logout request'), ...problemResponses } } }, async (request) =>
    logouts.view(request.account.id, request.params.challenge),
  )
  for (const verb of ['accept', 'reject'] as const) {
    app.post(
      `${base}/${verb}`,
      {
        config,
        schema: {
          summary: verb === 'accept' ? 'Accepts the logout: the session ends' : 'Rejects the logout: the session stays',
          description: 'The same answer sent again gets the same `redirect_to`; the other answer is a 409.',
          params: Challenge,
          response: { 200: ref(LogoutAnswerSchema, 'Where the app sends the browser next'), ...problemResponses },
        },
      },
      async (request) => ({ redirect_to: await logouts.answer(request.account.id, request.issuer, request.params.challenge, verb === 'accept') }),
    )
  }
}

async function logout(deps: LogoutRouteDeps, request: FastifyRequest, reply: FastifyReply, params: RawParameters): Promise<FastifyReply> {
  return answerInBrowser(deps, request, reply, (context) => {
    const verifier = untrustedSingle(params, 'logout_verifier')
    return verifier === undefined ? deps.logouts.start(context, params) : deps.logouts.finish(context, verifier)
  })
}
