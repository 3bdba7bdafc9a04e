import swagger from '@fastify/swagger'
import { DOCUMENT_TAGS, nameOperation } from './operations.js'
import type { App } from './types.js'

/** How callers authenticate; each operation names the schemes it accepts in its `security`. */
const SECURITY_SCHEMES = {
  managementToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: "An access token from the account's own token endpoint (client_credentials grant), issued to a management client with the herald: scopes the operation names",
  },
  userAccessToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: "A user's access token from the account's token endpoint (authorization_code grant), granted openid",
  },
  operatorToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'HERALD_OPERATOR_TOKEN. Without one configured, the operator routes answer 404 route_not_found, as if they did not exist',
  },
  initialAccessToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'An initial access token (RFC 7591 §3) from POST /oauth/registration-tokens; open registration needs none',
  },
  registrationAccessToken: {
    type: 'http',
    scheme: 'bearer',
    description: "The registration access token (RFC 7592) a client's registration answered, once",
  },
  clientSecretBasic: {
    type: 'http',
    scheme: 'basic',
    description: 'client_secret_basic (RFC 6749 §2.3.1): the client_id and client_secret, each form-urlencoded, as user name and password',
  },
} as const

/** A security requirement of an operation: one of its alternatives, each naming schemes and their scopes. */
export type SecurityRequirement = Partial<Record<keyof typeof SECURITY_SCHEMES, string[]>>

/** Routes anyone may call: health checks, discovery, the JWKS. */
export const PUBLIC: SecurityRequirement[] = []

export const OPERATOR: SecurityRequirement[] = [{ operatorToken: [] }]

/**
 * Client authentication at the OAuth endpoints. OpenAPI can describe HTTP Basic but has no scheme for credentials
 * in a form body, so client_secret_post (client_id and client_secret) and private_key_jwt (client_assertion_type
 * and client_assertion, RFC 7523 §2.2) are the empty alternative: nothing in the headers, the body's fields
 * documented on the request; `x-token-endpoint-auth-methods` lists the three by their RFC 8414 names.
 */
export const CLIENT_AUTHENTICATION: SecurityRequirement[] = [{ clientSecretBasic: [] }, {}]
export const CLIENT_AUTHENTICATION_METHODS = { 'x-token-endpoint-auth-methods': ['client_secret_basic', 'client_secret_post', 'private_key_jwt'] }

/**
 * Registers @fastify/swagger, which builds the OpenAPI 3.1 document from the route schemas, and serves it at
 * `/openapi.json`. Schemas added with `addSchema` become named components, under their `$id`; operations get their
 * `operationId` and tag from the table in operations.ts.
 */
export async function installOpenApi(app: App, publicUrl: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Herald',
        version: '0.1.0',
        description: 'OAuth 2.0 / OpenID Connect authorization and webhook delivery, per account.',
      },
      servers: [{ url: publicUrl }],
      components: { securitySchemes: SECURITY_SCHEMES },
      tags: DOCUMENT_TAGS,
    },
    transform: nameOperation,
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}
