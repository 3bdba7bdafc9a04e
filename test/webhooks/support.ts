import type { Kysely } from 'kysely'
import { afterEach, beforeEach } from 'vitest'
import { newId } from '../../src/platform/ids.js'
import type { DB, DeliveryStatus } from '../../src/platform/storage/schema.js'
import type { TestClock } from '../support/clock.js'
import type { CreatedAccount, StartOptions } from '../support/herald.js'
import { call, managementToken } from '../support/http.js'
import { Receiver } from '../support/receiver.js'

/** Webhook tests deliver to receivers on 127.0.0.1 over plain http. */
export const LOCAL_DELIVERY: StartOptions = { env: { HERALD_WEBHOOK_ALLOW_HTTP: 'true', HERALD_WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8' } }

export interface WebhookApi {
  post<T = Record<string, unknown>>(path: string, json?: unknown): Promise<{ status: number; body: T }>
  get<T = Record<string, unknown>>(path: string): Promise<{ status: number; body: T }>
  patch<T = Record<string, unknown>>(path: string, json: unknown): Promise<{ status: number; body: T }>
  delete(path: string): Promise<{ status: number }>
}

/** Tokens are fetched again once the test clock has moved this far: tests jump hours ahead. */
const TOKEN_REUSE_MS = 30 * 60 * 1000

/** The account's management API with a token carrying every management scope, renewed as the clock moves. */
export async function webhookApi(account: CreatedAccount, clock: TestClock): Promise<WebhookApi> {
  let current = { token: await managementToken(account), at: clock.now() }
  const token = async () => {
    if (clock.now() - current.at > TOKEN_REUSE_MS) current = { token: await managementToken(account), at: clock.now() }
    return current.token
  }
  const url = (path: string) => `${account.base}${path}`
  return {
    post: async (path, json) => call(url(path), 'POST', { token: await token(), json: json ?? {} }),
    get: async (path) => call(url(path), 'GET', { token: await token() }),
    patch: async (path, json) => call(url(path), 'PATCH', { token: await token(), json }),
    delete: async (path) => call(url(path), 'DELETE', { token: await token() }),
  }
}

export interface Endpoint {
  id: string
  url: string
  status: string
  disabled_reason: string | null
}

/** An endpoint at `url` subscribed to `eventTypes`. */
export async function subscribedEndpoint(api: WebhookApi, url: string, eventTypes: string[], extra: Record<string, unknown> = {}): Promise<Endpoint> {
  const endpoint = await api.post<Endpoint>('/webhooks/endpoints', { url, ...extra })
  if (endpoint.status !== 201) throw new Error(`endpoint creation failed: ${endpoint.status} ${JSON.stringify(endpoint.body)}`)
  const subscription = await api.post('/webhooks/subscriptions', { endpoint_id: endpoint.body.id, event_types: eventTypes })
  if (subscription.status !== 201) throw new Error(`subscription failed: ${subscription.status} ${JSON.stringify(subscription.body)}`)
  return endpoint.body
}

/** The deliveries to `endpointId` that leases running at `now` count as in flight (see DeliveryQueue.claim). */
export async function leasedTo(db: Kysely<DB>, endpointId: string, now: number): Promise<number> {
  const row = await db
    .selectFrom('webhook_leases')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('outstanding'), eb.lit(0)).as('n'))
    .where('endpoint_id', '=', endpointId)
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export interface Delivery {
  id: string
  event_id: string
  event_type: string
  endpoint_id: string
  status: string
  attempt_count: number
  last_response_status: number | null
  last_error: string | null
  last_attempt_at: string | null
  next_attempt_at: string | null
  attempts?: Array<{ number: number; started_at: string; response_status: number | null; error: string | null; duration_ms: number | null; response_excerpt: string | null }>
}

/** A fresh receiver for each test of the enclosing `describe`; read `.current` inside tests. */
export function useReceiver(): { readonly current: Receiver } {
  let receiver: Receiver | undefined
  beforeEach(async () => {
    receiver = await Receiver.start()
  })
  afterEach(async () => {
    await receiver?.close()
  })
  return {
    get current(): Receiver {
      if (!receiver) throw new Error('the receiver starts before each test: use it inside a test')
      return receiver
    },
  }
}

/**
 * `count` events of type `a.b` and their deliveries to `endpointId`, all `status` (due at `now` when pending),
 * written straight into the database, each event's delivery made after it as fan-out makes them: a backlog far
 * larger than publishing through the API would build in a test's time.
 */
export async function insertBacklog(db: Kysely<DB>, accountId: string, endpointId: string, status: 'held' | 'pending', count: number, now: number): Promise<{ eventIds: string[]; deliveryIds: string[] }> {
  const events = Array.from({ length: count }, (_, n) => ({ id: newId('evt', now), account_id: accountId, type: 'a.b', data: `{"n":${n}}`, created_at: now, fanned_out_at: now, idempotency_key: null }))
  const deliveryIds = events.map(() => newId('dlv', now))
  for (let start = 0; start < count; start += 250) {
    const chunk = events.slice(start, start + 250)
    await db.insertInto('events').values(chunk).execute()
    await db
      .insertInto('webhook_deliveries')
      .values(chunk.map((event, i) => ({ id: deliveryIds[start + i]!, account_id: accountId, event_id: event.id, event_type: 'a.b', endpoint_id: endpointId, status, attempt_count: 0, next_attempt_at: status === 'pending' ? now : null, lease_token: null, leased_at: null, lease_expires_at: null, last_attempt_at: null, last_response_status: null, last_error: null, finished_at: null, created_at: now })))
      .execute()
  }
  return { eventIds: events.map((event) => event.id), deliveryIds }
}

/** How many of the endpoint's deliveries have each status. */
export async function deliveryStatuses(db: Kysely<DB>, endpointId: string): Promise<Partial<Record<DeliveryStatus, number>>> {
  const rows = await db.selectFrom('webhook_deliveries').select(['status']).select((eb) => eb.fn.countAll<number>().as('n')).where('endpoint_id', '=', endpointId).groupBy('status').execute()
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]))
}
