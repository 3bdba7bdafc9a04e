import type { FastifyInstance } from 'fastify'
import { type Static, type TSchema, Type } from 'typebox'
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../pagination.js'
import { OAUTH_ERRORS } from './oauth-errors.js'
import { PROBLEMS } from './problems.js'

/** A schema shared between routes: registered once with `addSchema`, named by its `$id` in the OpenAPI document. */
export type NamedSchema = TSchema & { $id: string }

/** `schema` under a name, which Fastify and the OpenAPI document know it by once it is added with `addSchema`. */
export function named<T extends TSchema>(id: string, schema: T): T & { $id: string } {
  return Object.assign(schema, { $id: id })
}

/**
 * A reference to a shared schema, typed as the schema itself. Fastify's serializer resolves it among the schemas
 * the server added (see addSharedSchemas), and the OpenAPI document shows it as a `$ref` to the named component.
 */
export function ref<T extends NamedSchema>(schema: T, description?: string) {
  return Type.Unsafe<Static<T>>({ $ref: `${schema.$id}#`, ...(description !== undefined && { description }) })
}

/** RFC 9457 problem document, as every management and operator error is answered. */
export const ProblemSchema = named(
  'Problem',
  Type.Object(
    {
      type: Type.String({ description: 'urn:herald:problem: followed by the code' }),
      title: Type.String(),
      status: Type.Integer(),
      code: Type.Enum(Object.keys(PROBLEMS), { description: 'Stable machine-readable code; see docs/errors.md' }),
      detail: Type.Optional(Type.String()),
      errors: Type.Optional(Type.Array(Type.Object({ pointer: Type.String(), message: Type.String() }), { description: 'The fields that failed validation' })),
    },
    { description: 'An RFC 9457 problem document' },
  ),
)

/** RFC 6749 §5.2 error object, as the OAuth endpoints answer. */
export const OAuthErrorSchema = named(
  'OAuthError',
  Type.Object({ error: Type.Enum(Object.keys(OAUTH_ERRORS)), error_description: Type.Optional(Type.String()) }, { description: 'An OAuth 2.0 error response (RFC 6749 §5.2)' }),
)

/** The shapes the error handler answers with, which every route's error responses reference. */
export const errorSchemas = [ProblemSchema, OAuthErrorSchema]

/**
 * Adds the schemas routes reference to the root context, before any route is added. Only there: a context that
 * adds schemas of its own gets Fastify's default validator compiler back, in place of the strict one
 * installValidation sets.
 */
export function addSharedSchemas(app: FastifyInstance, schemas: readonly NamedSchema[]): void {
  for (const schema of schemas) app.addSchema(schema)
}

/** An answer carrying a problem document, under the media type RFC 9457 §6.1 registers for it. */
export const problemResponse = (description: string) => ({ description, content: { 'application/problem+json': { schema: ref(ProblemSchema) } } })

/** The error answers of the management and operator APIs (and of every route outside the OAuth endpoints). */
export const problemResponses = {
  '4xx': problemResponse('The request was refused; the problem document says why (code)'),
  '5xx': problemResponse('internal_error, or service_unavailable while the database is unreachable (with Retry-After)'),
}

const oauthError = (description: string) => ({ description, content: { 'application/json': { schema: ref(OAuthErrorSchema) } } })

/**
 * The error answers of the OAuth endpoints (RFC 6749 §5.2). An account that does not exist or is disabled is
 * answered before the endpoint runs, as a problem document.
 */
export const oauthErrorResponses = {
  400: oauthError('The request is invalid: invalid_request, invalid_grant, invalid_scope, unsupported_grant_type, …'),
  401: oauthError('invalid_client: client authentication failed (with WWW-Authenticate after HTTP Basic)'),
  404: problemResponse('The account does not exist or is disabled'),
  '5xx': oauthError('server_error, or temporarily_unavailable while the database is unreachable (with Retry-After)'),
}

export const PageQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE }),
  cursor: Type.Optional(Type.String({ maxLength: 512 })),
})

/** A page of a list, as every list route answers it. */
export function PageOf<T extends TSchema>(item: T, description: string) {
  return Type.Object(
    { data: Type.Array(item), next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as cursor for the next page; null on the last' }) },
    { description },
  )
}
