import type { FastifyReply } from 'fastify'
import type { TSchema } from 'typebox'
import { CLIENT_AUTHENTICATION, CLIENT_AUTHENTICATION_METHODS } from '../../platform/http/openapi.js'
import { oauthErrorResponses } from '../../platform/http/schemas.js'
import { OAUTH_BODY_LIMIT } from './token-request.js'

/**
 * The route options of an OAuth endpoint a client calls authenticated as at the token endpoint (PAR, introspection,
 * revocation, device authorization): a small form body, RFC 6749 error objects, and the client authentication in OpenAPI.
 */
export function clientAuthenticatedRoute<Body extends TSchema, Responses extends Record<number, unknown>>(summary: string, body: Body, responses: Responses) {
  return {
    bodyLimit: OAUTH_BODY_LIMIT,
    config: { errorFormat: 'oauth' as const },
    schema: {
      summary,
      security: CLIENT_AUTHENTICATION,
      ...CLIENT_AUTHENTICATION_METHODS,
      consumes: ['application/x-www-form-urlencoded'],
      body,
      response: { ...responses, ...oauthErrorResponses },
    },
  }
}

/** RFC 6749 §5.1: an answer carrying credentials is never cached. */
export function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
}
