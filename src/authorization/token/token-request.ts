import { type Static, Type } from 'typebox'

/**
 * The token request as the schema admits it. Unknown parameters are ignored (RFC 6749 §3.1); repeated ones
 * were already refused by the form parser, except `resource`, which RFC 8707 lets a client repeat.
 */
export const TokenRequestBody = Type.Object(
  {
    grant_type: Type.String({ minLength: 1, description: 'The grant type; `client_credentials` is supported' }),
    scope: Type.Optional(Type.String({ description: 'Space-separated scopes; omitted means all the client may request' })),
    resource: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], { description: 'RFC 8707 resource indicator' })),
    client_id: Type.Optional(Type.String()),
    client_secret: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
)
export type TokenRequestBody = Static<typeof TokenRequestBody>

export const TokenResponseSchema = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'Seconds until the access token expires' }),
  scope: Type.String(),
})

export const OAuthErrorSchema = Type.Object({
  error: Type.String(),
  error_description: Type.Optional(Type.String()),
})

export function resourcesOf(body: TokenRequestBody): string[] {
  if (body.resource === undefined) return []
  return Array.isArray(body.resource) ? body.resource : [body.resource]
}
