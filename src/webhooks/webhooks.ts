import type { FastifyBaseLogger } from 'fastify'
import type { Agent } from 'undici'
import type { AlarmClock } from '../platform/clock.js'
import type { Config } from '../platform/config.js'
import type { SecretBox } from '../platform/crypto/secret-box.js'
import type { Outbox } from '../platform/events/outbox.js'
import type { Awaitable } from '../platform/cache/awaitable.js'
import type { CacheInvalidation } from '../platform/cache/invalidation.js'
import type { Notifications } from '../platform/notifications/notifications.js'
import { Pruner } from '../platform/maintenance/pruner.js'
import type { SettingsStore } from '../platform/settings/settings.js'
import type { Database } from '../platform/storage/database.js'
import { Deliveries } from './delivery/deliveries.js'
import { DeliveryQueue } from './delivery/delivery-queue.js'
import { DEFAULT_WORKER_OPTIONS, DeliveryWorker } from './delivery/delivery-worker.js'
import { FanOut } from './delivery/fan-out.js'
import { RecoveryJobs } from './delivery/recovery-jobs.js'
import { DEFAULT_SENDER_OPTIONS, type LogoutTokenSource, Sender } from './delivery/sender.js'
import { TestDeliveries } from './delivery/test-deliveries.js'
import { WakeSignal } from './delivery/wake.js'
import { EndpointSecrets } from './endpoints/endpoint-secrets.js'
import { EndpointStore } from './endpoints/endpoint-store.js'
import { ClientLogoutEndpoints } from './endpoints/client-logout-endpoints.js'
import { EndpointStats } from './endpoints/endpoint-stats.js'
import { Endpoints } from './endpoints/endpoints.js'
import { StatusSweeps } from './endpoints/status-sweeps.js'
import { Events } from './events/events.js'
import { WebhookMetrics } from './metrics.js'
import { WebhookRetention } from './retention.js'
import { Subscriptions } from './subscriptions/subscriptions.js'

/** The webhook area, wired: what the API routes use, the worker, and the housekeeping. */
export interface Webhooks {
  endpoints: Endpoints
  endpointSecrets: EndpointSecrets
  /** The endpoints of clients' back-channel logout, for the authorization area. */
  clientLogoutEndpoints: ClientLogoutEndpoints
  stats: EndpointStats
  subscriptions: Subscriptions
  events: Events
  deliveries: Deliveries
  /** One `webhook.test` delivery to one endpoint, on demand. */
  testDeliveries: TestDeliveries
  jobs: RecoveryJobs
  sweeps: StatusSweeps
  /** Not started here: `herald serve` and `herald worker` start it, the operator CLI commands don't. */
  worker: DeliveryWorker
  metrics: WebhookMetrics
  /** Whether some endpoint of the account subscribes to an event type, from the cached subscriptions. */
  isSubscribed: (accountId: string, type: string) => Awaitable<boolean>
  pruners: { deliveries: Pruner; events: Pruner; idempotencyKeys: Pruner; leases: Pruner; endpointHours: Pruner }
}

export interface WebhookDeps {
  config: Config
  database: Database
  box: SecretBox
  clock: AlarmClock
  log: FastifyBaseLogger
  notifications: Notifications
  invalidation: CacheInvalidation
  outbox: Outbox
  settings: SettingsStore
  outbound: Agent
  /** Signs what goes to clients' logout endpoints. */
  logoutTokens: LogoutTokenSource
}

export function openWebhooks({ config, database, box, clock, log, notifications, invalidation, outbox, settings, outbound, logoutTokens }: WebhookDeps): Webhooks {
  const { db, dialect } = database
  const wake = new WakeSignal(notifications)
  // DESIGN: a lease outlasts the attempt's timeout and the flush that records it, with room to spare.
  const leaseMs = 2 * config.webhookTimeoutMs + 10 * DEFAULT_WORKER_OPTIONS.flushIntervalMs
  const workerOptions = { ...DEFAULT_WORKER_OPTIONS, leaseMs, concurrency: config.webhookConcurrency }
  const store = new EndpointStore(db, box, invalidation, dialect)
  // Batches of a status sweep are as large as the worker's other batches, with which they take turns.
  const sweeps = new StatusSweeps(db, dialect, clock, wake, workerOptions.batch)
  const endpoints = new Endpoints(db, dialect, store, clock, outbox, sweeps, wake, { allowHttp: config.allowHttpOutbound, allowedCidrs: config.webhookAllowedCidrs })
  const fanOut = new FanOut(db, dialect, store, wake, clock)
  const jobs = new RecoveryJobs(db, dialect, clock, wake)
  const queue = new DeliveryQueue(db, dialect, clock, settings, endpoints, outbox)
  const metrics = new WebhookMetrics(db, clock)
  const sender = new Sender(outbound, clock, { ...DEFAULT_SENDER_OPTIONS, timeoutMs: config.webhookTimeoutMs }, logoutTokens)
  const worker = new DeliveryWorker(queue, fanOut, jobs, sweeps, store, sender, metrics, clock, log, wake, workerOptions)
  const retention = new WebhookRetention(db, dialect, clock)
  const stats = new EndpointStats(db, dialect, clock)
  return {
    endpoints,
    endpointSecrets: new EndpointSecrets(db, store, clock),
    clientLogoutEndpoints: new ClientLogoutEndpoints(endpoints, dialect, wake, clock),
    stats,
    subscriptions: new Subscriptions(db, store, clock),
    events: new Events(db, fanOut, clock, dialect),
    deliveries: new Deliveries(db, dialect, clock, wake),
    testDeliveries: new TestDeliveries(db, dialect, store, wake, clock),
    jobs,
    sweeps,
    worker,
    metrics,
    isSubscribed: (accountId, type) => store.isSubscribed(accountId, type),
    pruners: {
      deliveries: new Pruner('finished webhook deliveries', (limit) => retention.pruneDeliveries(limit), log),
      events: new Pruner('webhook events past retention', (limit) => retention.pruneEvents(limit), log),
      idempotencyKeys: new Pruner('expired idempotency keys', (limit) => retention.pruneIdempotencyKeys(limit), log),
      leases: new Pruner('ended webhook leases', (limit) => retention.pruneLeases(limit), log),
      endpointHours: new Pruner('old endpoint statistics', (limit) => stats.pruneOld(limit), log),
    },
  }
}
