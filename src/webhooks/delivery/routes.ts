import { Type } from 'typebox'
import { rfc3339ToEpochMs } from '../../platform/clock.js'
import { PageOf, PageQuery, named, problemResponses, ref } from '../../platform/http/schemas.js'
import type { App } from '../../platform/http/types.js'
import type { Deliveries } from './deliveries.js'

const Timestamp = Type.String({ format: 'date-time' })
const Status = Type.Enum(['pending', 'succeeded', 'failed', 'held', 'cancelled'])
const DeliveryFields = {
  id: Type.String(),
  event_id: Type.String(),
  event_type: Type.String(),
  endpoint_id: Type.String(),
  status: Status,
  attempt_count: Type.Integer(),
  last_response_status: Type.Union([Type.Integer(), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()], { description: 'The network error class of the last attempt when it got no response' }),
  last_attempt_at: Type.Union([Timestamp, Type.Null()]),
  next_attempt_at: Type.Union([Timestamp, Type.Null()], { description: 'When a pending delivery is next attempted (while in flight: when its lease ends)' }),
  created_at: Timestamp,
}
export const DeliverySchema = named('Delivery', Type.Object(DeliveryFields))
const Unrecorded = 'Null on attempts recorded before Herald kept it'
const SentRequestSchema = named(
  'SentRequest',
  Type.Object(
    {
      url: Type.Union([Type.String(), Type.Null()], { description: `Where the attempt went. ${Unrecorded}` }),
      headers: Type.Union(
        [
          Type.Object({
            'webhook-id': Type.String({ description: 'The event id, the same on every attempt' }),
            'webhook-timestamp': Type.String({ description: "The attempt's start, in seconds since the epoch" }),
            'webhook-signature': Type.Union([Type.String(), Type.Null()], { description: `As sent: one v1 entry per secret that signed it. ${Unrecorded}` }),
          }),
          Type.Null(),
        ],
        { description: 'The Standard Webhooks headers it carried; null for a back-channel logout token' },
      ),
    },
    { description: 'The request an attempt sent, with the delivery body' },
  ),
)
const AttemptSchema = named(
  'Attempt',
  Type.Object({
    number: Type.Integer(),
    started_at: Timestamp,
    duration_ms: Type.Union([Type.Integer(), Type.Null()]),
    response_status: Type.Union([Type.Integer(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()], { description: 'timeout, refused, dns, tls, blocked_address, reset, response_too_large, network, worker_lost, or signing_failed (a logout token could not be signed)' }),
    response_excerpt: Type.Union([Type.String(), Type.Null()], { description: 'The first KiB of the response body' }),
    request: Type.Union([ref(SentRequestSchema), Type.Null()], { description: 'Null when the attempt sent nothing (signing_failed) or nothing is known of what it sent (worker_lost)' }),
  }),
)
const DeliveryWithAttemptsSchema = named(
  'DeliveryWithAttempts',
  Type.Object({
    ...DeliveryFields,
    body: Type.Union([Type.String(), Type.Null()], {
      description: "The body every attempt sent, byte for byte: {type, timestamp, data}. Null for a client's back-channel logout delivery (a logout token, signed afresh per attempt and not kept)",
    }),
    attempts: Type.Array(ref(AttemptSchema)),
  }),
)
export const deliverySchemas = [DeliverySchema, SentRequestSchema, AttemptSchema, DeliveryWithAttemptsSchema]
const Params = Type.Object({ accountId: Type.String(), deliveryId: Type.String({ maxLength: 64 }) })
const IdFilter = Type.String({ maxLength: 64 })

export function deliveryRoutes(app: App, deliveries: Deliveries): void {
  app.get(
    '/webhooks/deliveries',
    {
      config: { scope: 'herald:webhooks:read' },
      schema: {
        summary: "Lists the account's deliveries, newest first",
        querystring: Type.Object({
          ...PageQuery.properties,
          endpoint_id: Type.Optional(IdFilter),
          event_id: Type.Optional(IdFilter),
          event_type: Type.Optional(Type.String({ maxLength: 128 })),
          status: Type.Optional(Status),
          since: Type.Optional(Type.String({ format: 'date-time', description: 'Created at or after' })),
          until: Type.Optional(Type.String({ format: 'date-time', description: 'Created before' })),
        }),
        response: { 200: PageOf(ref(DeliverySchema), 'A page of deliveries'), ...problemResponses },
      },
    },
    async (request) => {
      const { limit, cursor, since, until, ...filter } = request.query
      return deliveries.list(request.account.id, { ...filter, since: since === undefined ? undefined : rfc3339ToEpochMs(since), until: until === undefined ? undefined : rfc3339ToEpochMs(until) }, limit, cursor)
    },
  )

  app.get(
    '/webhooks/deliveries/:deliveryId',
    { config: { scope: 'herald:webhooks:read' }, schema: { summary: 'Reads a delivery with the body it sends and every attempt, with its request', params: Params, response: { 200: ref(DeliveryWithAttemptsSchema, 'The delivery and every attempt, first to last'), ...problemResponses } } },
    async (request) => deliveries.get(request.account.id, request.params.deliveryId),
  )

  app.post(
    '/webhooks/deliveries/:deliveryId/retry',
    { config: { scope: 'herald:webhooks:write' }, schema: { summary: 'Attempts the delivery again now; while its endpoint is disabled, holds it until the endpoint is enabled', params: Params, response: { 202: ref(DeliverySchema, 'The delivery, queued or held'), ...problemResponses } } },
    async (request, reply) => reply.status(202).send(await deliveries.retry(request.account.id, request.params.deliveryId)),
  )
}
