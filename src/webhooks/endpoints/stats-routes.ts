import { Type } from 'typebox'
import { rfc3339ToEpochMs } from '../../platform/clock.js'
import { named, problemResponses, ref } from '../../platform/http/schemas.js'
import type { App } from '../../platform/http/types.js'
import { type EndpointStats, STATS_DAYS } from './endpoint-stats.js'

const Timestamp = Type.String({ format: 'date-time' })
const Duration = Type.Union([Type.Integer(), Type.Null()])

const EndpointStatsSchema = named(
  'EndpointStats',
  Type.Object(
    {
      endpoint_id: Type.String(),
      bucket: Type.Enum(['hour', 'day']),
      since: Timestamp,
      until: Timestamp,
      data: Type.Array(
        Type.Object({
          start: Timestamp,
          succeeded: Type.Integer({ description: 'Attempts answered 2xx' }),
          failed: Type.Integer({ description: 'Attempts answered otherwise' }),
          errored: Type.Integer({ description: 'Attempts without an answer: a network error, a timeout, a lost worker, a logout token that could not be signed' }),
          mean_duration_ms: { ...Duration, description: 'Mean duration of the answered attempts; null when none was' },
          max_duration_ms: { ...Duration, description: 'Longest answered attempt; null when none was' },
        }),
        { description: 'Every bucket of the range, oldest first, empty ones included' },
      ),
    },
    { description: "An endpoint's attempts per bucket" },
  ),
)
export const statsSchemas = [EndpointStatsSchema]

const Query = Type.Object(
  {
    since: Type.Optional({ ...Timestamp, description: `Start of the range (default: a day before until; at most ${STATS_DAYS} days back), rounded down to its bucket` }),
    until: Type.Optional({ ...Timestamp, description: 'End of the range (default and at most: now), rounded up to its bucket' }),
    bucket: Type.Optional(Type.Enum(['hour', 'day'], { description: 'hour (default) or day' })),
  },
  { additionalProperties: false },
)

export function endpointStatsRoutes(app: App, stats: EndpointStats): void {
  app.get(
    '/webhooks/endpoints/:endpointId/stats',
    {
      config: { scope: 'herald:webhooks:read' },
      schema: {
        summary: "The endpoint's attempts per hour or day, by outcome, with their durations; counted as attempts are recorded",
        params: Type.Object({ accountId: Type.String(), endpointId: Type.String({ maxLength: 64 }) }),
        querystring: Query,
        response: { 200: ref(EndpointStatsSchema, 'The counts'), ...problemResponses },
      },
    },
    async (request) => {
      const { since, until, bucket } = request.query
      const at = (value: string | undefined) => (value === undefined ? undefined : rfc3339ToEpochMs(value))
      return stats.read(request.account.id, request.params.endpointId, bucket ?? 'hour', at(since), at(until))
    },
  )
}
