import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { BEARER } from '../../platform/management-auth/management-auth.js'
import { OAuthError } from '../../platform/http/oauth-errors.js'
import { named, oauthErrorResponses, ref } from '../../platform/http/schemas.js'
import type { App } from '../../platform/http/types.js'
import { type ClientMetadata, ClientMetadataFields } from '../clients/client-metadata.js'
import { ClientFields } from '../clients/routes.js'
import { type Caller, RateLimited, type Registration, metadataError } from './registration.js'

const { admin: _admin, ...RegisteredClientFields } = ClientFields

const RegisteredClientSchema = named(
  'RegisteredClient',
  Type.Object(
    {
      ...RegisteredClientFields,
      registration_client_uri: Type.String({ description: 'Where the client reads, replaces and deletes its registration (RFC 7592)' }),
      registration_access_token: Type.Optional(Type.String({ description: 'Shown once, at registration: the bearer token for registration_client_uri' })),
    },
    { description: 'A client information response (RFC 7591 §3.2.1, RFC 7592 §3)' },
  ),
)

export const registrationSchemas = [RegisteredClientSchema]

/**
 * RFC 7591 §2: unknown metadata is ignored, not refused, unlike the management API; each known field is checked
 * against its schema, and a failure is answered as RFC 7591 §3.2.2 says (see validationFailure).
 */
const RegistrationBody = Type.Partial(Type.Object(ClientMetadataFields, { additionalProperties: true }))
const UpdateBody = Type.Intersect([
  RegistrationBody,
  Type.Object({ client_id: Type.String({ maxLength: 64 }), client_secret: Type.Optional(Type.String({ maxLength: 256 })) }, { additionalProperties: true }),
])
const ClientParams = Type.Object({ accountId: Type.String(), clientId: Type.String({ maxLength: 64 }) })
/** Client metadata is small; a JWK set of a few RSA keys fits well inside. */
const BODY_LIMIT = 64 * 1024

const responses = {
  ...oauthErrorResponses,
  400: { ...oauthErrorResponses[400], description: 'invalid_client_metadata or invalid_redirect_uri (RFC 7591 §3.2.2); access_denied when the account holds all the registered clients it may' },
  401: { ...oauthErrorResponses[401], description: 'invalid_token: the initial or registration access token is missing, wrong, used up or expired (RFC 6750 §3)' },
  429: { ...oauthErrorResponses[400], description: 'too_many_requests: open registration from this address is over its hourly limit; see Retry-After' },
}

/**
 * The registration endpoint (RFC 7591) and the client configuration endpoint (RFC 7592), under the account's base:
 * JSON in and out, errors as RFC 7591 §3.2.2 and RFC 6750 §3 objects, never cached.
 */
export function registrationRoutes(app: App, registration: Registration): void {
  const config = { errorFormat: 'oauth' as const }
  app.post(
    '/oauth/register',
    {
      config,
      bodyLimit: BODY_LIMIT,
      attachValidation: true,
      schema: {
        summary: 'Registers a client (RFC 7591), if the account allows it',
        security: [{ initialAccessToken: [] }, {}],
        body: RegistrationBody,
        response: { 201: ref(RegisteredClientSchema, 'The client, its secret and registration access token, shown once'), ...responses },
      },
    },
    async (request, reply) => {
      noStore(reply)
      const metadata = () => {
        refuseInvalid(request)
        return metadataOf(request.body)
      }
      try {
        return reply.status(201).send(await registration.register(callerOf(request), metadata))
      } catch (error) {
        if (error instanceof RateLimited) reply.header('retry-after', String(error.retryAfterSeconds))
        throw error
      }
    },
  )

  app.get(
    '/oauth/register/:clientId',
    {
      config,
      schema: { summary: 'Reads a registration (RFC 7592 §2.1)', security: [{ registrationAccessToken: [] }], params: ClientParams, response: { 200: ref(RegisteredClientSchema, 'The client'), ...responses } },
    },
    async (request, reply) => {
      noStore(reply)
      return registration.read(callerOf(request), request.params.clientId)
    },
  )

  app.put(
    '/oauth/register/:clientId',
    {
      config,
      bodyLimit: BODY_LIMIT,
      attachValidation: true,
      schema: {
        summary: 'Replaces a registration (RFC 7592 §2.2); what it leaves out takes its default',
        security: [{ registrationAccessToken: [] }],
        params: ClientParams,
        body: UpdateBody,
        response: { 200: ref(RegisteredClientSchema, 'The client as changed'), ...responses },
      },
    },
    async (request, reply) => {
      noStore(reply)
      return registration.update(callerOf(request), request.params.clientId, () => {
        refuseInvalid(request)
        const { client_id: clientId, client_secret: secret } = request.body
        return { client_id: clientId, ...(secret !== undefined && { client_secret: secret }), metadata: metadataOf(request.body) }
      })
    },
  )

  app.delete(
    '/oauth/register/:clientId',
    {
      config,
      schema: {
        summary: 'Deletes a registration and its client (RFC 7592 §2.3)',
        security: [{ registrationAccessToken: [] }],
        params: ClientParams,
        response: { 204: Type.Null({ description: 'The client is deleted' }), ...responses },
      },
    },
    async (request, reply) => {
      noStore(reply)
      await registration.delete(callerOf(request), request.params.clientId)
      return reply.status(204).send(null)
    },
  )
}

function noStore(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
}

function callerOf(request: FastifyRequest): Caller {
  const header = request.headers.authorization
  const bearer = header === undefined ? undefined : BEARER.exec(header)?.[1]
  if (header !== undefined && bearer === undefined) {
    throw new OAuthError('invalid_token', 'The Authorization header is not a Bearer token', 'Bearer error="invalid_token", error_description="The Authorization header is not a Bearer token"')
  }
  return { accountId: request.account.id, issuer: request.issuer, bearer, address: request.ip }
}

/** A body that failed its schema (attachValidation): RFC 7591 §3.2.2's error, pointing at the fields. */
function refuseInvalid(request: FastifyRequest): void {
  const failure = request.validationError as (FastifyError & { validation?: Array<{ instancePath: string; message?: string }> }) | undefined
  if (failure === undefined) return
  const problems = (failure.validation ?? []).map((item) => ({ pointer: `/body${item.instancePath}`, message: item.message ?? 'is invalid' }))
  throw metadataError(problems.length > 0 ? problems : [{ pointer: '/body', message: failure.message }])
}

/** The known metadata of a body: RFC 7591 §2 has the rest ignored. */
function metadataOf(body: object): Partial<ClientMetadata> {
  return Object.fromEntries(Object.entries(body).filter(([field]) => Object.hasOwn(ClientMetadataFields, field))) as Partial<ClientMetadata>
}
