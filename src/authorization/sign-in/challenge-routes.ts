import { type Static, Type } from 'typebox'
import { named, problemResponses, ref } from '../../platform/http/schemas.js'
import type { App } from '../../platform/http/types.js'
import type { Challenges } from './challenges.js'

const Challenge = Type.Object({ challenge: Type.String({ minLength: 1, maxLength: 128 }) })

const PublicClientSchema = Type.Object({
  client_id: Type.String(),
  client_name: Type.String(),
  client_uri: Type.Union([Type.String(), Type.Null()]),
  logo_uri: Type.Union([Type.String(), Type.Null()]),
  policy_uri: Type.Union([Type.String(), Type.Null()]),
  tos_uri: Type.Union([Type.String(), Type.Null()]),
  source: Type.Enum(['management', 'registration', 'metadata_document'], {
    description: 'Where the client came from: `metadata_document` is a client that named itself by the URL of its Client ID Metadata Document, which nobody at the account vetted',
  }),
})

const RequestFields = {
  challenge: Type.String(),
  flow: Type.Enum(['authorize', 'device'], { description: '`device`: a device authorization (RFC 8628), whose user code the user typed at the device verification' }),
  client: PublicClientSchema,
  requested_scope: Type.Array(Type.String()),
  requested_audience: Type.Array(Type.String()),
  skip: Type.Boolean({ description: 'Login: the browser has a live session (accept with its subject, without a form). Consent: a remembered consent covers the request' }),
  subject: Type.Union([Type.String(), Type.Null()]),
  oidc_context: Type.Object({
    login_hint: Type.Union([Type.String(), Type.Null()]),
    acr_values: Type.Array(Type.String()),
    ui_locales: Type.Array(Type.String()),
    max_age: Type.Union([Type.Integer(), Type.Null()]),
  }),
  request_url: Type.String({ description: 'The authorization request, for information' }),
  session_id: Type.Union([Type.String(), Type.Null()]),
}
const LoginRequestSchema = named('LoginRequest', Type.Object(RequestFields, { description: 'A login waiting for the login app' }))
const ConsentRequestSchema = named(
  'ConsentRequest',
  Type.Object({ ...RequestFields, context: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]) }, { description: 'A consent waiting for the consent app' }),
)
const RedirectSchema = named('ChallengeAnswer', Type.Object({ redirect_to: Type.String({ description: 'Where the app sends the browser next' }) }))
export const challengeSchemas = [LoginRequestSchema, ConsentRequestSchema, RedirectSchema]

const Claims = Type.Record(Type.String({ maxLength: 128 }), Type.Unknown())
const RememberFor = Type.Integer({ minimum: 0, maximum: 365 * 24 * 3600, description: 'Seconds; 0 or absent: the account default (login) or until revoked (consent)' })

const LoginAcceptance = Type.Object(
  {
    subject: Type.String({ minLength: 1, maxLength: 255, description: "The user's stable identifier in the account's app" }),
    remember: Type.Optional(Type.Boolean({ description: 'Remember the login in this browser, so later logins are skipped' })),
    remember_for: Type.Optional(RememberFor),
    acr: Type.Optional(Type.String({ maxLength: 255 })),
    amr: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 10 })),
    context: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Passed on to the consent request' })),
  },
  { additionalProperties: false },
)

const ConsentAcceptance = Type.Object(
  {
    grant_scope: Type.Array(Type.String({ maxLength: 128 }), { maxItems: 100, description: 'A subset of requested_scope' }),
    grant_audience: Type.Optional(Type.Array(Type.String({ maxLength: 2048 }), { maxItems: 20, description: 'A subset of requested_audience' })),
    remember: Type.Optional(Type.Boolean()),
    remember_for: Type.Optional(RememberFor),
    session: Type.Optional(
      Type.Object(
        {
          id_token: Type.Optional(Claims),
          access_token: Type.Optional(Claims),
        },
        { additionalProperties: false, description: 'Claims for the ID token (and userinfo) and for the access token; claims Herald sets are refused' },
      ),
    ),
  },
  { additionalProperties: false },
)

const Rejection = Type.Object(
  {
    error: Type.Enum(['access_denied', 'login_required', 'consent_required', 'interaction_required', 'invalid_request', 'invalid_scope', 'server_error', 'temporarily_unavailable'], {
      description: 'The OAuth error the client receives',
    }),
    error_description: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
)

const ANSWER_LIMIT = 32 * 1024

/**
 * The login app's API (Ory Hydra's model): read a login or consent request by its challenge, then accept or reject
 * it. Requires `herald:login`, the only scope a login app's client needs.
 */
export function challengeRoutes(app: App, challenges: Challenges): void {
  for (const kind of ['login', 'consent'] as const) {
    const base = `/oauth/${kind}-requests/:challenge`
    const config = { scope: 'herald:login' as const }
    app.get(
      base,
      { config, schema: { summary: `A ${kind} request waiting for the account's app`, params: Challenge, response: { 200: ref(kind === 'login' ? LoginRequestSchema : ConsentRequestSchema, `The ${kind} request`), ...problemResponses } } },
      async (request) => challenges.view(request.account.id, request.issuer, kind, request.params.challenge),
    )
    app.post(
      `${base}/accept`,
      {
        config,
        bodyLimit: ANSWER_LIMIT,
        schema: { summary: `Accepts the ${kind} request`, params: Challenge, body: kind === 'login' ? LoginAcceptance : ConsentAcceptance, response: { 200: ref(RedirectSchema, 'Where the app sends the browser next'), ...problemResponses } },
      },
      async (request) => {
        const { account, issuer, params } = request
        const redirectTo =
          kind === 'login'
            ? await challenges.acceptLogin(account.id, issuer, params.challenge, request.body as Static<typeof LoginAcceptance>)
            : await challenges.acceptConsent(account.id, issuer, params.challenge, request.body as Static<typeof ConsentAcceptance>)
        return { redirect_to: redirectTo }
      },
    )
    app.post(
      `${base}/reject`,
      { config, bodyLimit: ANSWER_LIMIT, schema: { summary: `Rejects the ${kind} request; the client receives the error`, params: Challenge, body: Rejection, response: { 200: ref(RedirectSchema, 'Where the app sends the browser next'), ...problemResponses } } },
      async (request) => {
        const { error, error_description: description } = request.body
        const redirectTo = await challenges.reject(request.account.id, request.issuer, kind, request.params.challenge, { error, error_description: description ?? `The ${kind} was rejected` })
        return { redirect_to: redirectTo }
      },
    )
  }
}
