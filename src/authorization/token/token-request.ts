import { type Static, Type } from 'typebox'

/** Token, introspection and revocation requests are small; anything near this is garbage. */
export const OAUTH_BODY_LIMIT = 16 * 1024

/** How a client may authenticate in the body of any OAuth request (RFC 6749 §2.3.1, RFC 7523 §2.2). */
export const ClientCredentialFields = {
  client_id: Type.Optional(Type.String({ description: 'client_secret_post, or the client an assertion names (optional then)' })),
  client_secret: Type.Optional(Type.String({ description: 'client_secret_post: the secret in the body rather than in HTTP Basic' })),
  client_assertion_type: Type.Optional(Type.String({ description: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer (RFC 7523)' })),
  client_assertion: Type.Optional(Type.String({ description: 'A JWT signed with a key of the client (private_key_jwt)' })),
}

/**
 * The token request as the schema admits it. Unknown parameters are ignored (RFC 6749 §3.1); repeated ones
 * were already refused by the form parser, except `resource`, which RFC 8707 lets a client repeat.
 */
export const TokenRequestBody = Type.Object(
  {
    grant_type: Type.String({ minLength: 1, description: 'The grant type: `authorization_code`, `refresh_token`, `client_credentials` or `urn:ietf:params:oauth:grant-type:token-exchange`' }),
    code: Type.Optional(Type.String({ maxLength: 256, description: 'authorization_code: the code from the authorization response' })),
    redirect_uri: Type.Optional(Type.String({ maxLength: 2048, description: 'authorization_code: the redirect_uri of the authorization request' })),
    code_verifier: Type.Optional(Type.String({ maxLength: 128, description: 'authorization_code: the PKCE verifier (RFC 7636)' })),
    refresh_token: Type.Optional(Type.String({ maxLength: 256, description: 'refresh_token: the refresh token' })),
    device_code: Type.Optional(Type.String({ maxLength: 256, description: 'urn:ietf:params:oauth:grant-type:device_code: the device code (RFC 8628 §3.4)' })),
    scope: Type.Optional(Type.String({ description: 'Space-separated scopes; omitted means all the client may request' })),
    resource: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], { description: 'RFC 8707 resource indicator' })),
    audience: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], { description: 'token exchange: the logical name of the target service (RFC 8693 §2.1), like `resource`' })),
    subject_token: Type.Optional(Type.String({ description: 'token exchange: the token whose subject the new token is for' })),
    subject_token_type: Type.Optional(Type.String({ description: 'token exchange: `urn:ietf:params:oauth:token-type:access_token` or `…:id_token`' })),
    actor_token: Type.Optional(Type.String({ description: 'token exchange: an access token of the acting client' })),
    actor_token_type: Type.Optional(Type.String({ description: 'token exchange: `urn:ietf:params:oauth:token-type:access_token`, required with actor_token' })),
    requested_token_type: Type.Optional(Type.String({ description: 'token exchange: only `urn:ietf:params:oauth:token-type:access_token`' })),
    ...ClientCredentialFields,
  },
  { additionalProperties: true },
)
export type TokenRequestBody = Static<typeof TokenRequestBody>

export const TokenResponseSchema = Type.Object(
  {
    access_token: Type.String(),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ description: 'Seconds until the access token expires' }),
    scope: Type.String(),
    refresh_token: Type.Optional(Type.String({ description: 'A refresh token (rotated on every use), when the client may refresh and, for OpenID Connect, offline_access was granted' })),
    id_token: Type.Optional(Type.String({ description: 'authorization_code with `openid` granted: the ID token (OpenID Connect Core §3.1.3.3)' })),
    issued_token_type: Type.Optional(Type.String({ description: 'token exchange: the type of `access_token` (RFC 8693 §2.2.1)' })),
  },
  { description: 'The access token (RFC 6749 §5.1)' },
)

const NO_RESOURCES: readonly string[] = Object.freeze([])

export function resourcesOf(body: TokenRequestBody): readonly string[] {
  if (body.resource === undefined) return NO_RESOURCES
  return Array.isArray(body.resource) ? body.resource : [body.resource]
}
