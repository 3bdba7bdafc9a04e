import { Type } from 'typebox'
import { rfc3339ToEpochMs } from '../../platform/clock.js'
import { PageOf, PageQuery, named, problemResponses, ref } from '../../platform/http/schemas.js'
import type { App } from '../../platform/http/types.js'
import type { RecoveryJobs } from '../delivery/recovery-jobs.js'
import { DeliverySchema } from '../delivery/routes.js'
import type { TestDeliveries } from '../delivery/test-deliveries.js'
import type { EndpointSecrets } from './endpoint-secrets.js'
import type { Endpoints } from './endpoints.js'

const Timestamp = Type.String({ format: 'date-time' })
const EndpointSchema = named(
  'Endpoint',
  Type.Object({
    id: Type.String(),
    url: Type.String(),
    description: Type.String(),
    status: Type.Enum(['active', 'disabled']),
    disabled_reason: Type.Union([Type.Enum(['manual', 'failing', 'gone']), Type.Null()], { description: 'manual: by the account; failing: failed continuously for webhook_disable_after; gone: answered 410' }),
    disabled_at: Type.Union([Timestamp, Type.Null()]),
    metadata: Type.Record(Type.String(), Type.String()),
    rate_limit: Type.Union([Type.Integer(), Type.Null()]),
    max_in_flight: Type.Integer(),
    client_id: Type.Union([Type.String(), Type.Null()], {
      description: "Set when the endpoint carries a client's back-channel logout tokens (its backchannel_logout_uri): its URL, secret and deletion go with the client",
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  }),
)
const SecretText = Type.String({ maxLength: 200, description: 'whsec_ followed by the base64 of 24 to 64 random bytes' })
const Fields = {
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'https, and not a private, loopback or link-local address (see HERALD_WEBHOOK_ALLOWED_CIDRS)' }),
  description: Type.String({ maxLength: 1024 }),
  // TypeBox turns a Record's key schema into a pattern and drops its maxLength, so the key bound is stated as
  // propertyNames, which Ajv enforces.
  metadata: Type.Record(Type.String(), Type.String({ maxLength: 512 }), {
    maxProperties: 50,
    propertyNames: { maxLength: 64 },
    description: 'Your own labels; Herald only stores them. Keys are at most 64 characters, values at most 512',
  }),
  rate_limit: Type.Union([Type.Integer({ minimum: 1, maximum: 10_000 }), Type.Null()], { description: 'Deliveries per second at most, across every worker; null for no limit' }),
  max_in_flight: Type.Integer({ minimum: 1, maximum: 1000, description: 'Attempts in flight at once, across every worker (default 20)' }),
}
const CreateBody = Type.Object(
  { url: Fields.url, description: Type.Optional(Fields.description), metadata: Type.Optional(Fields.metadata), rate_limit: Type.Optional(Fields.rate_limit), max_in_flight: Type.Optional(Fields.max_in_flight), secret: Type.Optional(SecretText) },
  { additionalProperties: false },
)
const PatchBody = Type.Partial(Type.Object({ ...Fields, status: Type.Enum(['active', 'disabled'], { description: 'disabled holds new deliveries; active releases them' }) }), { additionalProperties: false, minProperties: 1 })
const RotateBody = Type.Object(
  { secret: Type.Optional(SecretText), overlap_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 7 * 24 * 3600, description: 'How long the old secret keeps signing beside the new one (default 86400)' })) },
  { additionalProperties: false },
)
const JobSchema = named(
  'RecoveryJob',
  Type.Object({
    id: Type.String(),
    kind: Type.Literal('recover'),
    endpoint_id: Type.String(),
    since: Timestamp,
    status: Type.Enum(['pending', 'done']),
    requeued: Type.Integer({ description: 'Failed deliveries queued again so far' }),
    created_at: Timestamp,
    finished_at: Type.Union([Timestamp, Type.Null()]),
  }),
)
export const endpointSchemas = [EndpointSchema, JobSchema]
const Params = Type.Object({ accountId: Type.String(), endpointId: Type.String({ maxLength: 64 }) })

export function endpointRoutes(app: App, endpoints: Endpoints, secrets: EndpointSecrets, jobs: RecoveryJobs, tests: TestDeliveries): void {
  app.post(
    '/webhooks/endpoints',
    { config: { scope: 'herald:webhooks:write' }, bodyLimit: 32 * 1024, schema: { summary: 'Adds an endpoint', body: CreateBody, response: { 201: ref(EndpointSchema, 'The endpoint'), ...problemResponses } } },
    async (request, reply) => reply.status(201).send(await endpoints.create(request.account.id, request.body)),
  )

  app.get(
    '/webhooks/endpoints',
    { config: { scope: 'herald:webhooks:read' }, schema: { summary: "Lists the account's endpoints, oldest first", querystring: PageQuery, response: { 200: PageOf(ref(EndpointSchema), 'A page of endpoints'), ...problemResponses } } },
    async (request) => endpoints.list(request.account.id, request.query.limit, request.query.cursor),
  )

  app.get(
    '/webhooks/endpoints/:endpointId',
    { config: { scope: 'herald:webhooks:read' }, schema: { summary: 'Reads an endpoint', params: Params, response: { 200: ref(EndpointSchema, 'The endpoint'), ...problemResponses } } },
    async (request) => endpoints.get(request.account.id, request.params.endpointId),
  )

  app.patch(
    '/webhooks/endpoints/:endpointId',
    { config: { scope: 'herald:webhooks:write' }, bodyLimit: 32 * 1024, schema: { summary: 'Changes an endpoint; status disables or enables it', params: Params, body: PatchBody, response: { 200: ref(EndpointSchema, 'The endpoint as changed'), ...problemResponses } } },
    async (request) => endpoints.update(request.account.id, request.params.endpointId, request.body),
  )

  app.delete(
    '/webhooks/endpoints/:endpointId',
    { config: { scope: 'herald:webhooks:write' }, schema: { summary: 'Deletes an endpoint and its subscriptions; its unfinished deliveries become cancelled', params: Params, response: { 204: Type.Null({ description: 'The endpoint is deleted' }), ...problemResponses } } },
    async (request, reply) => {
      await endpoints.delete(request.account.id, request.params.endpointId)
      return reply.status(204).send(null)
    },
  )

  app.get(
    '/webhooks/endpoints/:endpointId/secret',
    { config: { scope: 'herald:webhooks:write' }, schema: { summary: "Reveals the endpoint's signing secret", params: Params, response: { 200: Type.Object({ secret: Type.String() }, { description: 'The current signing secret' }), ...problemResponses } } },
    async (request) => secrets.reveal(request.account.id, request.params.endpointId),
  )

  app.post(
    '/webhooks/endpoints/:endpointId/secret/rotate',
    {
      config: { scope: 'herald:webhooks:write' },
      bodyLimit: 4096,
      schema: {
        summary: 'Replaces the signing secret; the old one keeps signing beside it for the overlap',
        params: Params,
        body: RotateBody,
        response: {
          200: Type.Object({ secret: Type.String(), previous_secret_expires_at: Type.Union([Timestamp, Type.Null()]) }, { description: 'The new secret, and when the previous one stops signing' }),
          ...problemResponses,
        },
      },
    },
    async (request) => secrets.rotate(request.account.id, request.params.endpointId, { secret: request.body.secret, overlapSeconds: request.body.overlap_seconds }),
  )

  app.post(
    '/webhooks/endpoints/:endpointId/recover',
    {
      config: { scope: 'herald:webhooks:write' },
      bodyLimit: 4096,
      schema: {
        summary: "Queues again the endpoint's failed deliveries created since a time, as a background job",
        params: Params,
        body: Type.Object({ since: Timestamp }, { additionalProperties: false }),
        response: { 202: ref(JobSchema, 'The recovery job, queued'), ...problemResponses },
      },
    },
    async (request, reply) => reply.status(202).send(await jobs.create(request.account.id, request.params.endpointId, rfc3339ToEpochMs(request.body.since))),
  )

  app.post(
    '/webhooks/endpoints/:endpointId/test',
    {
      config: { scope: 'herald:webhooks:write' },
      schema: {
        summary: 'Sends the endpoint, and it alone, a webhook.test event as an ordinary delivery, whatever it subscribes to; held while the endpoint is disabled',
        params: Params,
        response: { 202: ref(DeliverySchema, 'The delivery, queued (or held: the endpoint is disabled)'), ...problemResponses },
      },
    },
    async (request, reply) => reply.status(202).send(await tests.send(request.account.id, request.params.endpointId)),
  )

  app.get(
    '/webhooks/jobs/:jobId',
    { config: { scope: 'herald:webhooks:read' }, schema: { summary: 'Reads a recovery job', params: Type.Object({ accountId: Type.String(), jobId: Type.String({ maxLength: 64 }) }), response: { 200: ref(JobSchema, 'The recovery job'), ...problemResponses } } },
    async (request) => jobs.get(request.account.id, request.params.jobId),
  )
}
