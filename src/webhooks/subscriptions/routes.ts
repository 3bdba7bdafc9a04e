import { Type } from 'typebox'
import { PageOf, PageQuery, named, problemResponses, ref } from '../../platform/http/schemas.js'
import type { App } from '../../platform/http/types.js'
import type { Subscriptions } from './subscriptions.js'

const SubscriptionSchema = named(
  'Subscription',
  Type.Object({
    id: Type.String(),
    endpoint_id: Type.String(),
    event_types: Type.Array(Type.String()),
    created_at: Type.String({ format: 'date-time' }),
  }),
)
export const subscriptionSchemas = [SubscriptionSchema]
const Params = Type.Object({ accountId: Type.String(), subscriptionId: Type.String({ maxLength: 64 }) })

export function subscriptionRoutes(app: App, subscriptions: Subscriptions): void {
  app.post(
    '/webhooks/subscriptions',
    {
      config: { scope: 'herald:webhooks:write' },
      bodyLimit: 16 * 1024,
      schema: {
        summary: 'Subscribes an endpoint to event types',
        body: Type.Object(
          {
            endpoint_id: Type.String({ maxLength: 64 }),
            event_types: Type.Array(Type.String({ minLength: 1, maxLength: 130 }), { minItems: 1, maxItems: 50, description: 'Exact types (invoice.paid), prefix patterns (invoice.*) or *' }),
          },
          { additionalProperties: false },
        ),
        response: { 201: ref(SubscriptionSchema, 'The subscription'), ...problemResponses },
      },
    },
    async (request, reply) => reply.status(201).send(await subscriptions.create(request.account.id, request.body.endpoint_id, request.body.event_types)),
  )

  app.get(
    '/webhooks/subscriptions',
    {
      config: { scope: 'herald:webhooks:read' },
      schema: {
        summary: "Lists the account's subscriptions, oldest first",
        querystring: Type.Object({ ...PageQuery.properties, endpoint_id: Type.Optional(Type.String({ maxLength: 64 })) }),
        response: { 200: PageOf(ref(SubscriptionSchema), 'A page of subscriptions'), ...problemResponses },
      },
    },
    async (request) => subscriptions.list(request.account.id, request.query.limit, request.query.cursor, request.query.endpoint_id),
  )

  app.get(
    '/webhooks/subscriptions/:subscriptionId',
    { config: { scope: 'herald:webhooks:read' }, schema: { summary: 'Reads a subscription', params: Params, response: { 200: ref(SubscriptionSchema, 'The subscription'), ...problemResponses } } },
    async (request) => subscriptions.get(request.account.id, request.params.subscriptionId),
  )

  app.delete(
    '/webhooks/subscriptions/:subscriptionId',
    { config: { scope: 'herald:webhooks:write' }, schema: { summary: 'Deletes a subscription', params: Params, response: { 204: Type.Null({ description: 'The subscription is deleted' }), ...problemResponses } } },
    async (request, reply) => {
      await subscriptions.delete(request.account.id, request.params.subscriptionId)
      return reply.status(204).send(null)
    },
  )
}
