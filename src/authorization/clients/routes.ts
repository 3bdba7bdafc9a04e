import { Type } from 'typebox'
import { principalOf } from '../../platform/http/account-scope.js'
import { PageOf, PageQuery, named, problemResponses, ref } from '../../platform/http/schemas.js'
import type { App } from '../../platform/http/types.js'
import type { Account } from '../../platform/accounts/accounts.js'
import type { Page } from '../../platform/pagination.js'
import { ClientMetadataFields } from './client-metadata.js'
import type { ClientWithSecret, Clients } from './clients.js'

/** A client's fields as the API shows them; registration (RFC 7591) shows the same, with its own. */
export const ClientFields = {
  client_id: Type.String(),
  ...ClientMetadataFields,
  client_id_issued_at: Type.Integer(),
  management: Type.Boolean({ description: 'Allowed reserved herald: scopes; such clients use client_credentials only' }),
  admin: Type.Boolean({
    description: "The account's original management client (the admin_client its creation answered): it can't be deleted, its scopes, grants and authentication don't change, and `herald accounts reset-admin` replaces its secret",
  }),
  source: Type.Enum(['management', 'registration', 'metadata_document'], {
    description: 'Where the client came from: this API, RFC 7591 registration, or a Client ID Metadata Document',
  }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  client_secret: Type.Optional(Type.String({ description: 'Shown only when it is made: at registration and rotation' })),
  client_secret_expires_at: Type.Optional(Type.Literal(0)),
}

const ClientSchema = named('Client', Type.Object(ClientFields))

export const clientSchemas = [ClientSchema]

/** The client as the API shows it: whether it is the account's original management client is the account's to say. */
function shown(account: Account, client: ClientWithSecret): ClientWithSecret & { admin: boolean } {
  return { ...client, admin: client.client_id === account.adminClientId }
}

function shownPage(account: Account, page: Page<ClientWithSecret>): Page<ClientWithSecret & { admin: boolean }> {
  return { ...page, data: page.data.map((client) => shown(account, client)) }
}

const MetadataInput = Type.Partial(Type.Object(ClientMetadataFields), { additionalProperties: false })
// A client of a metadata document is named by its URL (up to 2048 characters), percent-encoded in the path.
const ClientParams = Type.Object({ accountId: Type.String(), clientId: Type.String({ maxLength: 2048 }) })
/** Client metadata is small; a JWK set of a few RSA keys fits well inside. */
const BODY_LIMIT = 64 * 1024

export function clientRoutes(app: App, clients: Clients): void {
  app.post(
    '/oauth/clients',
    {
      config: { scope: 'herald:clients:write' },
      bodyLimit: BODY_LIMIT,
      schema: { summary: 'Registers a client (RFC 7591 metadata)', body: MetadataInput, response: { 201: ref(ClientSchema, 'The client, with its secret if it has one'), ...problemResponses } },
    },
    async (request, reply) => reply.status(201).send(shown(request.account, await clients.create(request.account.id, request.body, principalOf(request).scopes))),
  )

  app.get(
    '/oauth/clients',
    {
      config: { scope: 'herald:clients:read' },
      schema: { summary: "Lists the account's clients, oldest first", querystring: PageQuery, response: { 200: PageOf(ref(ClientSchema), 'A page of clients'), ...problemResponses } },
    },
    async (request) => shownPage(request.account, await clients.list(request.account.id, request.query.limit, request.query.cursor)),
  )

  app.get(
    '/oauth/clients/:clientId',
    { config: { scope: 'herald:clients:read' }, schema: { summary: 'Reads a client', params: ClientParams, response: { 200: ref(ClientSchema, 'The client'), ...problemResponses } } },
    async (request) => shown(request.account, await clients.get(request.account.id, request.params.clientId)),
  )

  app.patch(
    '/oauth/clients/:clientId',
    {
      config: { scope: 'herald:clients:write' },
      bodyLimit: BODY_LIMIT,
      schema: { summary: "Changes a client's metadata; the result is validated as a whole", params: ClientParams, body: MetadataInput, response: { 200: ref(ClientSchema, 'The client as changed'), ...problemResponses } },
    },
    async (request) => shown(request.account, await clients.update(request.account.id, request.params.clientId, request.body, principalOf(request).scopes)),
  )

  app.delete(
    '/oauth/clients/:clientId',
    { config: { scope: 'herald:clients:write' }, schema: { summary: 'Deletes a client; its tokens stop being issued and introspect inactive', params: ClientParams, response: { 204: Type.Null({ description: 'The client is deleted' }), ...problemResponses } } },
    async (request, reply) => {
      await clients.delete(request.account.id, request.params.clientId, principalOf(request).scopes)
      return reply.status(204).send(null)
    },
  )

  app.post(
    '/oauth/clients/:clientId/secret',
    { config: { scope: 'herald:clients:write' }, schema: { summary: "Replaces the client's secret at once; the new one is shown only here", params: ClientParams, response: { 200: ref(ClientSchema, 'The client with its new secret'), ...problemResponses } } },
    async (request) => shown(request.account, await clients.rotateSecret(request.account.id, request.params.clientId, principalOf(request).scopes)),
  )
}
