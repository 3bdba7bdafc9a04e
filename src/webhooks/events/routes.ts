import { Type } from 'typebox'
import { PageOf, PageQuery, named, problemResponses, ref } from '../../platform/http/schemas.js'
import type { App } from '../../platform/http/types.js'
import type { Events } from './events.js'
import { MAX_TYPE_LENGTH } from './event-types.js'

/** Published event bodies; documented in the README. Larger bodies are answered 413. */
export const PUBLISH_BODY_LIMIT = 256 * 1024

const EventSchema = named(
  'Event',
  Type.Object({
    id: Type.String({ description: 'Also the webhook-id header of every delivery of the event' }),
    type: Type.String(),
    data: Type.Unknown(),
    idempotency_key: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
  }),
)
export const eventSchemas = [EventSchema]

export function eventRoutes(app: App, events: Events): void {
  app.post(
    '/webhooks/events',
    {
      config: { scope: 'herald:events:publish' },
      bodyLimit: PUBLISH_BODY_LIMIT,
      schema: {
        summary: 'Publishes an event to every subscribed endpoint; a repeated idempotency_key answers with the original event',
        body: Type.Object(
          {
            type: Type.String({ minLength: 1, maxLength: MAX_TYPE_LENGTH, description: 'Dot-separated, e.g. invoice.paid; oauth. and webhook. are reserved' }),
            data: Type.Record(Type.String(), Type.Unknown(), { description: 'Any JSON object; the body is limited to 256 KiB' }),
            // No control characters: a NUL is storable on SQLite but refused by PostgreSQL, and no key needs one.
            idempotency_key: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\u0000-\\u001f\\u007f]+$' })),
          },
          { additionalProperties: false },
        ),
        response: { 200: ref(EventSchema, 'The event first published with this idempotency_key'), 201: ref(EventSchema, 'The event, published'), ...problemResponses },
      },
    },
    async (request, reply) => {
      const { event, created } = await events.publish(request.account.id, request.body)
      return reply.status(created ? 201 : 200).send(event)
    },
  )

  app.get(
    '/webhooks/events',
    {
      config: { scope: 'herald:webhooks:read' },
      schema: {
        summary: "Lists the account's events, newest first",
        querystring: Type.Object({ ...PageQuery.properties, type: Type.Optional(Type.String({ maxLength: MAX_TYPE_LENGTH })) }),
        response: { 200: PageOf(ref(EventSchema), 'A page of events'), ...problemResponses },
      },
    },
    async (request) => events.list(request.account.id, request.query.limit, request.query.cursor, request.query.type),
  )

  app.get(
    '/webhooks/events/:eventId',
    { config: { scope: 'herald:webhooks:read' }, schema: { summary: 'Reads an event', params: Type.Object({ accountId: Type.String(), eventId: Type.String({ maxLength: 64 }) }), response: { 200: ref(EventSchema, 'The event'), ...problemResponses } } },
    async (request) => events.get(request.account.id, request.params.eventId),
  )

  app.get(
    '/webhooks/event-types',
    {
      config: { scope: 'herald:webhooks:read' },
      schema: {
        summary: "Every event type Herald emits, and the custom types the account has published",
        response: {
          200: Type.Object({ data: Type.Array(Type.Object({ name: Type.String(), description: Type.String(), example: Type.Unknown(), custom: Type.Boolean() })) }, { description: 'The event types' }),
          ...problemResponses,
        },
      },
    },
    async (request) => ({ data: await events.types(request.account.id) }),
  )
}
