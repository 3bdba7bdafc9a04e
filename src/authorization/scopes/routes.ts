import { Type } from 'typebox'
import { PageOf, PageQuery, named, problemResponses, ref } from '../../platform/http/schemas.js'
import type { App } from '../../platform/http/types.js'
import type { Scopes } from './scopes.js'

const ScopeSchema = named(
  'Scope',
  Type.Object({
    name: Type.String(),
    description: Type.String(),
    kind: Type.Enum(['oidc', 'custom'], { description: 'oidc scopes exist in every account and cannot be deleted' }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  }),
)
export const scopeSchemas = [ScopeSchema]
const Description = Type.String({ maxLength: 1000 })
const ScopeParams = Type.Object({ accountId: Type.String(), name: Type.String({ minLength: 1, maxLength: 128 }) })

export function scopeRoutes(app: App, scopes: Scopes): void {
  app.post(
    '/oauth/scopes',
    {
      config: { scope: 'herald:scopes:write' },
      bodyLimit: 8192,
      schema: {
        summary: 'Registers a scope',
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 128 }), description: Type.Optional(Description) }, { additionalProperties: false }),
        response: { 201: ref(ScopeSchema, 'The scope'), ...problemResponses },
      },
    },
    async (request, reply) => reply.status(201).send(await scopes.create(request.account.id, request.body.name, request.body.description ?? '')),
  )

  app.get(
    '/oauth/scopes',
    {
      config: { scope: 'herald:clients:read' },
      schema: { summary: "Lists the account's scopes by name", querystring: PageQuery, response: { 200: PageOf(ref(ScopeSchema), 'A page of scopes'), ...problemResponses } },
    },
    async (request) => scopes.list(request.account.id, request.query.limit, request.query.cursor),
  )

  app.get(
    '/oauth/scopes/:name',
    { config: { scope: 'herald:clients:read' }, schema: { summary: 'Reads a scope', params: ScopeParams, response: { 200: ref(ScopeSchema, 'The scope'), ...problemResponses } } },
    async (request) => scopes.get(request.account.id, request.params.name),
  )

  app.patch(
    '/oauth/scopes/:name',
    {
      config: { scope: 'herald:scopes:write' },
      bodyLimit: 8192,
      schema: {
        summary: "Changes a scope's description",
        params: ScopeParams,
        body: Type.Object({ description: Description }, { additionalProperties: false }),
        response: { 200: ref(ScopeSchema, 'The scope as changed'), ...problemResponses },
      },
    },
    async (request) => scopes.update(request.account.id, request.params.name, request.body.description),
  )

  app.delete(
    '/oauth/scopes/:name',
    {
      config: { scope: 'herald:scopes:write' },
      schema: { summary: 'Deletes a scope no client allows any more', params: ScopeParams, response: { 204: Type.Null({ description: 'The scope is deleted' }), ...problemResponses } },
    },
    async (request, reply) => {
      await scopes.delete(request.account.id, request.params.name)
      return reply.status(204).send(null)
    },
  )
}
