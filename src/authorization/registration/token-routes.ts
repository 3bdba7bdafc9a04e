import { Type } from 'typebox'
import { PageOf, PageQuery, named, problemResponses, ref } from '../../platform/http/schemas.js'
import type { App } from '../../platform/http/types.js'
import { GRANT_TYPES } from '../clients/client-metadata.js'
import { DEFAULT_TOKEN_LIFETIME_SECONDS, type InitialAccessTokens, MAX_TOKEN_LIFETIME_SECONDS, MAX_TOKEN_USES } from './initial-access-tokens.js'

const GrantTypes = Type.Array(Type.Enum([...GRANT_TYPES]), { uniqueItems: true })

const RegistrationTokenSchema = named(
  'RegistrationToken',
  Type.Object(
    {
      id: Type.String(),
      token: Type.Optional(Type.String({ description: 'The initial access token, shown only here, when it is made; send it as a Bearer token to POST /oauth/register' })),
      expires_at: Type.String({ format: 'date-time' }),
      max_uses: Type.Integer(),
      uses: Type.Integer({ description: 'Registrations made with it so far' }),
      scope: Type.Union([Type.String(), Type.Null()], { description: "The most a client registered with it may be allowed, within the account's registration policy; null: the policy's" }),
      grant_types: Type.Union([GrantTypes, Type.Null()], { description: "Likewise for grant types; null: the policy's" }),
      created_at: Type.String({ format: 'date-time' }),
    },
    { description: 'An initial access token (RFC 7591 §3)' },
  ),
)

export const registrationTokenSchemas = [RegistrationTokenSchema]

const CreateBody = Type.Object(
  {
    expires_in: Type.Optional(Type.Integer({ minimum: 60, maximum: MAX_TOKEN_LIFETIME_SECONDS, description: `Seconds it stays usable (default ${DEFAULT_TOKEN_LIFETIME_SECONDS})` })),
    max_uses: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TOKEN_USES, description: 'How many clients it may register (default 1)' })),
    scope: Type.Optional(Type.String({ maxLength: 4096, description: 'Space-separated: narrows the scopes registration may give; herald: scopes never' })),
    grant_types: Type.Optional(GrantTypes),
  },
  { additionalProperties: false },
)

const TokenParams = Type.Object({ accountId: Type.String(), tokenId: Type.String({ maxLength: 64 }) })

/** The management API's initial access tokens: made, listed and revoked with herald:clients:write. */
export function registrationTokenRoutes(app: App, tokens: InitialAccessTokens): void {
  app.post(
    '/oauth/registration-tokens',
    {
      config: { scope: 'herald:clients:write' },
      bodyLimit: 8 * 1024,
      schema: { summary: 'Makes an initial access token for dynamic client registration (RFC 7591 §3)', body: CreateBody, response: { 201: ref(RegistrationTokenSchema, 'The token, shown once, with its limits'), ...problemResponses } },
    },
    async (request, reply) => reply.status(201).header('cache-control', 'no-store').send(await tokens.create(request.account.id, request.body)),
  )

  app.get(
    '/oauth/registration-tokens',
    {
      config: { scope: 'herald:clients:write' },
      schema: { summary: "Lists the account's initial access tokens, oldest first; each is deleted soon after it expires", querystring: PageQuery, response: { 200: PageOf(ref(RegistrationTokenSchema), 'A page of tokens'), ...problemResponses } },
    },
    async (request) => tokens.list(request.account.id, request.query.limit, request.query.cursor),
  )

  app.delete(
    '/oauth/registration-tokens/:tokenId',
    {
      config: { scope: 'herald:clients:write' },
      schema: { summary: 'Revokes an initial access token; clients registered with it stay', params: TokenParams, response: { 204: Type.Null({ description: 'The token is revoked' }), ...problemResponses } },
    },
    async (request, reply) => {
      await tokens.delete(request.account.id, request.params.tokenId)
      return reply.status(204).send(null)
    },
  )
}
