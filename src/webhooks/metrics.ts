import type { Kysely } from 'kysely'
import { Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { Clock } from '../platform/clock.js'
import { TtlCache } from '../platform/cache/ttl-cache.js'
import type { DB } from '../platform/storage/schema.js'
import type { AttemptOutcome } from './delivery/attempt.js'
import { DUE_SINCE, queued } from './delivery/leases.js'

/** A scrape reuses counts of waiting and due deliveries this fresh: a backlog can be millions of index entries. */
const COUNT_MAX_AGE_MS = 15_000
/**
 * The statuses the gauge counts: those a delivery waits in, each on a partial index of its own. Finished deliveries
 * are counted as they finish (herald_webhook_deliveries_finished_total): counting them in the table would read every
 * row kept for retention, at each scrape of each process.
 */
const WAITING_STATUSES = ['pending', 'held'] as const

/**
 * The webhook area's Prometheus metrics. Counters and histograms are this process's; the queue gauges are read
 * from the database at scrape time, so every process reports the same shared queue. Cross-account: the gauges
 * count every account's deliveries.
 */
export class WebhookMetrics {
  readonly registry = new Registry()
  readonly #attempts = new Counter({ name: 'herald_webhook_attempts_total', help: 'Delivery attempts by outcome: the response class (2xx, 3xx, 4xx, 5xx) or the network error class', labelNames: ['outcome'], registers: [this.registry] })
  readonly #duration = new Histogram({ name: 'herald_webhook_attempt_duration_seconds', help: 'How long attempts took, from the request to the end of the kept response', buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15], registers: [this.registry] })
  readonly #firstAttempt = new Histogram({ name: 'herald_webhook_publish_to_first_attempt_seconds', help: "From an event's creation to the start of its deliveries' first attempts", buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60], registers: [this.registry] })
  readonly #finished = new Counter({ name: 'herald_webhook_deliveries_finished_total', help: 'Deliveries that reached a final status in this process', labelNames: ['status'], registers: [this.registry] })

  constructor(db: Kysely<DB>, clock: Clock) {
    // Keyed by what each counts; nothing invalidates them, they just age.
    const counts = new TtlCache<number>(COUNT_MAX_AGE_MS, clock)
    const deliveries = () => db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number>().as('n'))
    const count = async (key: string, query: ReturnType<typeof deliveries>) => (await counts.get(key, async () => Number((await query.executeTakeFirst())?.n ?? 0))) ?? 0
    const statusCounts = () => Promise.all(WAITING_STATUSES.map(async (status) => ({ status, count: await count(status, deliveries().where('status', '=', status)) })))
    const dueCount = () => count('due', deliveries().where(queued('webhook_deliveries', clock.now())))
    new Gauge({
      name: 'herald_webhook_deliveries',
      help: 'Deliveries waiting, by status (pending, held), across every process',
      labelNames: ['status'],
      registers: [this.registry],
      async collect() {
        const rows = await statusCounts()
        this.reset()
        for (const row of rows) this.set({ status: row.status }, row.count)
      },
    })
    new Gauge({
      name: 'herald_webhook_queue_due',
      help: 'Pending deliveries that are due now (the queue depth)',
      registers: [this.registry],
      async collect() {
        this.set(await dueCount())
      },
    })
    new Gauge({
      name: 'herald_webhook_oldest_due_age_seconds',
      help: 'How long the longest-waiting due delivery has been due; 0 when none is',
      registers: [this.registry],
      async collect() {
        const now = clock.now()
        // A delivery has been due since its next_attempt_at or later (the end of a lost lease), so none that became
        // due after the first one's due-since time can have waited longer: only the index up to that time is read.
        const first = await db.selectFrom('webhook_deliveries').select(DUE_SINCE.as('due')).where(queued('webhook_deliveries', now)).orderBy('next_attempt_at').limit(1).executeTakeFirst()
        if (!first) return this.set(0)
        const row = await db
          .selectFrom('webhook_deliveries')
          .select((eb) => eb.fn.min(DUE_SINCE).as('due'))
          .where(queued('webhook_deliveries', now))
          .where('next_attempt_at', '<=', first.due)
          .executeTakeFirst()
        const due = row?.due ?? first.due
        this.set(due > now ? 0 : (now - due) / 1000)
      },
    })
  }

  attempted(outcome: AttemptOutcome): void {
    this.#attempts.inc({ outcome: outcome.responseStatus === null ? (outcome.error ?? 'network') : `${Math.floor(outcome.responseStatus / 100)}xx` })
    if (outcome.durationMs !== null) this.#duration.observe(outcome.durationMs / 1000)
    if (outcome.delivery.attemptNumber === 1) this.#firstAttempt.observe(Math.max(0, outcome.startedAt - outcome.delivery.eventCreatedAt) / 1000)
  }

  finished(status: string, count = 1): void {
    this.#finished.inc({ status }, count)
  }
}
