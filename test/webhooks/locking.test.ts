import { type Kysely, type RawBuilder, sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import type { DB } from '../../src/platform/storage/schema.js'
import { Outbox } from '../../src/platform/events/outbox.js'
import { DeliveryQueue } from '../../src/webhooks/delivery/delivery-queue.js'
import { DEFAULT_WORKER_OPTIONS } from '../../src/webhooks/delivery/delivery-worker.js'
import { WebhookRetention } from '../../src/webhooks/retention.js'
import { forEachDialect, useHerald } from '../support/herald.js'
import { createAccount } from '../support/http.js'
import { eventually } from '../support/receiver.js'
import { type Delivery, deliveryStatuses, insertBacklog, LOCAL_DELIVERY, subscribedEndpoint, useReceiver, type WebhookApi, webhookApi } from './support.js'

const DAY_MS = 24 * 3600 * 1000

/**
 * A transaction of its own that takes a lock and keeps it, running more statements on request, until `commit`.
 * With it a test puts another transaction's statements in a chosen order, without sleeping. A statement that fails
 * rolls the transaction back.
 */
class LockHolder {
  readonly #statements: Array<{ statement: RawBuilder<unknown>; done: (error?: unknown) => void }> = []
  #wake: (() => void) | undefined
  #committing = false
  readonly #finished: Promise<void>

  private constructor(db: Kysely<DB>, first: RawBuilder<unknown>, locked: (error?: unknown) => void) {
    this.#statements.push({ statement: first, done: locked })
    this.#finished = db.transaction().execute(async (trx) => {
      for (;;) {
        const next = this.#statements.shift()
        if (next) {
          try {
            await next.statement.execute(trx)
          } catch (error) {
            next.done(error)
            throw error
          }
          next.done()
        } else if (this.#committing) return
        else await new Promise<void>((resolve) => (this.#wake = resolve))
      }
    })
  }

  static async take(db: Kysely<DB>, statement: RawBuilder<unknown>): Promise<LockHolder> {
    let holder: LockHolder | undefined
    await new Promise<void>((resolve, reject) => {
      holder = new LockHolder(db, statement, (error) => (error ? reject(error) : resolve()))
    })
    return holder!
  }

  run(statement: RawBuilder<unknown>): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#statements.push({ statement, done: (error) => (error ? reject(error) : resolve()) })
      this.#wake?.()
    })
  }

  /** Commits, unless a statement failed; safe to call again, as a `finally` does after a test that failed. */
  async commit(): Promise<void> {
    this.#committing = true
    this.#wake?.()
    await this.#finished.catch(() => undefined)
  }
}

/** Resolves once `count` sessions of this database are waiting for a lock; fails if they don't within 10 s. */
async function lockWaiters(db: Kysely<DB>, count: number): Promise<void> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(db)
    if (rows[0]!.n >= count) return
    if (Date.now() > deadline) throw new Error(`${count} sessions never waited for a lock at once (${rows[0]!.n} did)`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

forEachDialect((dialect) => {
  describe('a manual retry', () => {
    const h = useHerald(dialect, LOCAL_DELIVERY)
    const receiver = useReceiver()

    it('is refused once the endpoint is deleted, and the delivery stays as it was', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['a.*'])
      const published = await api.post<{ id: string }>('/webhooks/events', { type: 'a.b', data: {} })
      const delivery = await eventually(async () => {
        const page = await api.get<{ data: Delivery[] }>(`/webhooks/deliveries?event_id=${published.body.id}`)
        return page.body.data.find((d) => d.status === 'succeeded')
      })
      expect(receiver.current.messageIds).toEqual([published.body.id])

      expect((await api.delete(`/webhooks/endpoints/${endpoint.id}`)).status).toBe(204)
      const retried = await api.post<{ code: string; detail: string }>(`/webhooks/deliveries/${delivery.id}/retry`)
      expect(retried.status).toBe(409)
      expect(retried.body.detail).toMatch(/endpoint was deleted/)
      expect((await api.get<Delivery>(`/webhooks/deliveries/${delivery.id}`)).body.status).toBe('succeeded')
    })
  })

  // Another process's change reaches this one's caches a moment after it commits (see CacheInvalidation); until
  // then the cached routes and targets are behind. A change written straight into the database stands for one.
  describe("an endpoint's status, read from its row", () => {
    const h = useHerald(dialect, LOCAL_DELIVERY)
    const receiver = useReceiver()

    async function deliveriesOf(api: WebhookApi, eventId: string): Promise<Delivery[]> {
      return (await api.get<{ data: Delivery[] }>(`/webhooks/deliveries?event_id=${eventId}`)).body.data
    }

    it('decides whether a new delivery is held, and a deleted endpoint gets none, whatever the routes cached', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['a.*'])
      const db = h.current.herald.database.db
      const first = await api.post<{ id: string }>('/webhooks/events', { type: 'a.b', data: {} })
      await eventually(() => receiver.current.messageIds.includes(first.body.id))

      await db.updateTable('webhook_endpoints').set({ status: 'disabled', disabled_reason: 'manual' }).where('id', '=', endpoint.id).execute()
      const whileDisabled = await api.post<{ id: string }>('/webhooks/events', { type: 'a.b', data: {} })
      expect((await deliveriesOf(api, whileDisabled.body.id)).map((d) => [d.endpoint_id, d.status, d.next_attempt_at])).toEqual([[endpoint.id, 'held', null]])

      await db.deleteFrom('webhook_endpoints').where('id', '=', endpoint.id).execute()
      const afterDelete = await api.post<{ id: string }>('/webhooks/events', { type: 'a.b', data: {} })
      expect(afterDelete.status).toBe(201)
      expect(await deliveriesOf(api, afterDelete.body.id)).toEqual([])
      expect(receiver.current.messageIds).toEqual([first.body.id])
    })

    /**
     * A new event's delivery whose first attempt fails (500) after `change` has been made to its endpoint's row while
     * the attempt was in flight; answers the delivery once that attempt is recorded.
     */
    async function failedAttemptAfter(change: (db: Kysely<DB>, endpointId: string) => Promise<unknown>): Promise<Delivery> {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['a.*'])
      let answer!: () => void
      receiver.current.respond = () => ({ status: 500, until: new Promise<void>((resolve) => (answer = resolve)) })
      const published = await api.post<{ id: string }>('/webhooks/events', { type: 'a.b', data: {} })
      await eventually(() => receiver.current.requests.length === 1)
      await change(h.current.herald.database.db, endpoint.id)
      answer()
      const [delivery] = await eventually(async () => {
        const found = await deliveriesOf(api, published.body.id)
        return found[0]?.attempt_count === 1 && found
      })
      return delivery!
    }

    it('decides whether a failed attempt waits as held', async () => {
      // Disabled while the attempt is in flight, by a process whose news has not come yet.
      const delivery = await failedAttemptAfter((db, endpointId) => db.updateTable('webhook_endpoints').set({ status: 'disabled', disabled_reason: 'manual' }).where('id', '=', endpointId).execute())
      expect([delivery.status, delivery.last_response_status, delivery.next_attempt_at]).toEqual(['held', 500, null])
    })

    it('cancels a failed attempt whose endpoint was deleted while it was in flight', async () => {
      // Deleted by a delete that had cancelled what was in flight before this delivery was leased, by a claim that
      // read the endpoint just before. The delete's sweep may already be past it: held, it would wait for ever.
      const delivery = await failedAttemptAfter((db, endpointId) => db.deleteFrom('webhook_endpoints').where('id', '=', endpointId).execute())
      expect([delivery.status, delivery.last_response_status, delivery.next_attempt_at]).toEqual(['cancelled', 500, null])
    })
  })

  // Interleavings that need two transactions at once: SQLite runs one at a time.
  if (dialect !== 'postgres') return

  describe('concurrent changes on PostgreSQL', () => {
    const idle = useHerald(dialect, { ...LOCAL_DELIVERY, worker: false })

    /** A pending delivery to a new endpoint of a new account, which no worker will attempt. */
    async function pendingDelivery() {
      const account = await createAccount(idle.current)
      const api = await webhookApi(account, idle.current.clock)
      const endpoint = await subscribedEndpoint(api, 'http://127.0.0.1:9/unreachable', ['a.*'])
      await api.post('/webhooks/events', { type: 'a.b', data: {} })
      const db = idle.current.herald.database.db
      const { id } = await db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', endpoint.id).executeTakeFirstOrThrow()
      return { api, db, endpoint, id }
    }

    async function failedDelivery(finishedAt: number) {
      const delivery = await pendingDelivery()
      await delivery.db.updateTable('webhook_deliveries').set({ status: 'failed', attempt_count: 8, next_attempt_at: null, finished_at: finishedAt }).where('id', '=', delivery.id).execute()
      return delivery
    }

    /**
     * Holds the lock `lock` takes while `first` starts and comes to wait for a lock, then `second` does, then lets
     * go: the two go on in the order the interleaving under test needs. Answers what each answered.
     */
    async function oneAfterTheOther<A, B>(db: Kysely<DB>, lock: RawBuilder<unknown>, first: () => Promise<A>, second: () => Promise<B>): Promise<[A, B]> {
      const holder = await LockHolder.take(db, lock)
      let firstDone: Promise<A> | undefined
      let secondDone: Promise<B> | undefined
      try {
        firstDone = first()
        await lockWaiters(db, 1)
        secondDone = second()
        await lockWaiters(db, 2)
      } finally {
        await holder.commit()
      }
      return Promise.all([firstDone, secondDone])
    }

    it('two requests disabling one endpoint at once disable it once', async () => {
      const { api, db, endpoint } = await pendingDelivery()
      const [first, second] = await oneAfterTheOther(
        db,
        sql`select id from webhook_endpoints where id = ${endpoint.id} for update`,
        () => api.patch<{ status: string }>(`/webhooks/endpoints/${endpoint.id}`, { status: 'disabled' }),
        () => api.patch<{ status: string }>(`/webhooks/endpoints/${endpoint.id}`, { status: 'disabled' }),
      )

      expect([first.status, first.body.status, second.status, second.body.status]).toEqual([200, 'disabled', 200, 'disabled'])
      const events = await api.get<{ data: Array<{ data: { id: string } }> }>('/webhooks/events?type=webhook.endpoint.disabled')
      expect(events.body.data.map((event) => event.data.id)).toEqual([endpoint.id])
    })

    it('deleting an endpoint is run again when it deadlocks with the write of an attempt', async () => {
      const { api, db, endpoint, id } = await pendingDelivery()
      // The holder stands for the write of an attempt of a delivery leased between the delete's two passes: it has
      // the delivery, which the delete's second pass waits for, and then asks for the endpoint, which the delete holds.
      const holder = await LockHolder.take(db, sql`update webhook_deliveries set attempt_count = attempt_count where id = ${id}`)
      let deleted
      try {
        deleted = api.delete(`/webhooks/endpoints/${endpoint.id}`)
        await lockWaiters(db, 1)
        // PostgreSQL finds the deadlock from the side that waited first, the delete, and aborts it.
        await holder.run(sql`update webhook_endpoints set failing_since = 1 where id = ${endpoint.id}`)
      } finally {
        await holder.commit()
      }

      expect((await deleted).status).toBe(204)
      expect((await api.get(`/webhooks/endpoints/${endpoint.id}`)).status).toBe(404)
      expect((await db.selectFrom('webhook_deliveries').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status).toBe('cancelled')
    })

    it('of two retries of one failed delivery at once, the second answers 409 and queues nothing', async () => {
      const { api, db, id } = await failedDelivery(idle.current.clock.now())
      // Both read the delivery as failed, then queue behind the holder to change it; the first queues it again.
      const [first, second] = await oneAfterTheOther(
        db,
        sql`select id from webhook_deliveries where id = ${id} for update`,
        () => api.post<Delivery>(`/webhooks/deliveries/${id}/retry`),
        () => api.post<{ code: string }>(`/webhooks/deliveries/${id}/retry`),
      )

      expect(first.status).toBe(202)
      expect([second.status, second.body.code]).toEqual([409, 'conflict'])
    })

    it('retention does not delete a delivery that a retry queued after retention read it', async () => {
      const { api, db, id } = await failedDelivery(idle.current.clock.now() - 40 * DAY_MS)
      // The retry reads the delivery and then waits for the holder; the pruner reads it as past retention and
      // queues behind the retry for the same row.
      const [retried, pruned] = await oneAfterTheOther(
        db,
        sql`select id from webhook_deliveries where id = ${id} for update`,
        () => api.post<Delivery>(`/webhooks/deliveries/${id}/retry`),
        () => idle.current.herald.pruners.deliveries.runOnce(),
      )

      expect(retried.status).toBe(202)
      expect(retried.body.status).toBe('pending')
      expect(pruned).toBe(0)
      expect((await api.get<Delivery>(`/webhooks/deliveries/${id}`)).body.status).toBe('pending')
    })

    it('a retry answers 404 when retention deleted the delivery after the retry read it', async () => {
      const { api, db, id } = await failedDelivery(idle.current.clock.now() - 40 * DAY_MS)
      // Retention reaches the delivery first and waits for the holder; the retry reads it, then queues behind.
      const [pruned, retried] = await oneAfterTheOther(
        db,
        sql`select id from webhook_deliveries where id = ${id} for update`,
        () => idle.current.herald.pruners.deliveries.runOnce(),
        () => api.post<{ code: string }>(`/webhooks/deliveries/${id}/retry`),
      )

      expect(pruned).toBe(1)
      expect(retried.status).toBe(404)
      expect(retried.body.code).toBe('not_found')
    })

    it("of two retention runs deleting an event's last two deliveries at once, the second deletes the event", async () => {
      const account = await createAccount(idle.current)
      const api = await webhookApi(account, idle.current.clock)
      const endpoints = [await subscribedEndpoint(api, 'http://127.0.0.1:9/one', ['a.*']), await subscribedEndpoint(api, 'http://127.0.0.1:9/two', ['a.*'])]
      const event = await api.post<{ id: string }>('/webhooks/events', { type: 'a.b', data: {} })
      const { db, dialect } = idle.current.herald.database
      const now = idle.current.clock.now()
      const finished = async (endpointId: string, daysAgo: number) => {
        const { id } = await db
          .updateTable('webhook_deliveries')
          .set({ status: 'failed', attempt_count: 8, next_attempt_at: null, finished_at: now - daysAgo * DAY_MS })
          .where('endpoint_id', '=', endpointId)
          .returning('id')
          .executeTakeFirstOrThrow()
        return id
      }
      await finished(endpoints[0]!.id, 41)
      const newer = await finished(endpoints[1]!.id, 40)
      // The holder stands for the other run, which has deleted the newer delivery and locked the event, and has found
      // the older one still there. This run, one delivery at a time, deletes the older one and asks about the event.
      const holder = await LockHolder.take(db, sql`delete from webhook_deliveries where id = ${newer}`)
      let pruned
      try {
        await holder.run(sql`select id from events where id = ${event.body.id} for update`)
        pruned = new WebhookRetention(db, dialect, idle.current.clock).pruneDeliveries(1)
        await lockWaiters(db, 1)
      } finally {
        await holder.commit()
      }

      expect(await pruned).toBe(1)
      expect(await db.selectFrom('webhook_deliveries').select('id').where('event_id', '=', event.body.id).execute()).toEqual([])
      expect(await db.selectFrom('events').select('id').where('id', '=', event.body.id).execute()).toEqual([])
    })

    it('deleting an endpoint cancels a delivery that a retry queued while the delete waited for it', async () => {
      const { api, db, endpoint, id } = await failedDelivery(idle.current.clock.now())
      // The retry has read the endpoint as active and waits for the holder to queue the delivery; the delete must
      // wait for the retry rather than leave a pending delivery of an endpoint that no longer exists.
      const [retried, deleted] = await oneAfterTheOther(
        db,
        sql`select id from webhook_deliveries where id = ${id} for update`,
        () => api.post<Delivery>(`/webhooks/deliveries/${id}/retry`),
        () => api.delete(`/webhooks/endpoints/${endpoint.id}`),
      )

      expect(retried.status).toBe(202)
      expect(deleted.status).toBe(204)
      const row = await db.selectFrom('webhook_deliveries').select(['status', 'finished_at']).where('id', '=', id).executeTakeFirstOrThrow()
      expect(row.status).toBe('cancelled')
      expect(row.finished_at).not.toBeNull()
    })

    it('a retry of a pending delivery and a delete of its endpoint both go through, and the delivery is cancelled', async () => {
      const { api, db, endpoint, id } = await pendingDelivery()
      // The retry gets the endpoint's row first, then needs the delivery's; the delete must not have taken the
      // delivery's in between (when it did, the two deadlocked and one answered 500).
      const [retried, deleted] = await oneAfterTheOther(
        db,
        sql`select id from webhook_endpoints where id = ${endpoint.id} for update`,
        () => api.post<Delivery>(`/webhooks/deliveries/${id}/retry`),
        () => api.delete(`/webhooks/endpoints/${endpoint.id}`),
      )

      expect(retried.status).toBe(202)
      expect(deleted.status).toBe(204)
      expect((await db.selectFrom('webhook_deliveries').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status).toBe('cancelled')
    })
  })

  describe("an endpoint's row on PostgreSQL", () => {
    const h = useHerald(dialect, LOCAL_DELIVERY)
    const receiver = useReceiver()

    /** A lock holder part way through enabling the endpoint: its row is locked and changed, its held deliveries not yet released. */
    async function halfEnabled(endpointId: string) {
      const db = h.current.herald.database.db
      const holder = await LockHolder.take(db, sql`select id from webhook_endpoints where id = ${endpointId} for update`)
      await holder.run(sql`update webhook_endpoints set status = 'active', disabled_reason = null, disabled_at = null where id = ${endpointId}`)
      const release = () => holder.run(sql`update webhook_deliveries set status = 'pending', next_attempt_at = ${h.current.clock.now()} where endpoint_id = ${endpointId} and status = 'held'`)
      return { db, holder, release }
    }

    it('a publish does not wait for a claim or the write of an attempt that holds it', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['a.*'])
      const db = h.current.herald.database.db
      // The lock a claim (of a rate-limited endpoint) or a completion takes on the endpoint's row.
      const holder = await LockHolder.take(db, sql`select id from webhook_endpoints where id = ${endpoint.id} for no key update`)
      let outcome
      try {
        const published = api.post<{ id: string }>('/webhooks/events', { type: 'a.b', data: {} })
        outcome = await Promise.race([published, lockWaiters(db, 1).then(() => 'waited for the lock' as const)])
      } finally {
        await holder.commit()
      }
      expect(outcome).toMatchObject({ status: 201 })
      const { body } = outcome as { body: { id: string } }
      await eventually(() => receiver.current.messageIds.includes(body.id))
    })

    it('is waited for by a publish while it is being enabled, and the delivery is then due', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['a.*'])
      expect((await api.patch(`/webhooks/endpoints/${endpoint.id}`, { status: 'disabled' })).status).toBe(200)
      const { db, holder, release } = await halfEnabled(endpoint.id)
      let published
      try {
        published = api.post<{ id: string }>('/webhooks/events', { type: 'a.b', data: {} })
        await lockWaiters(db, 1)
        await release()
      } finally {
        await holder.commit()
      }
      const event = await published
      expect(event.status).toBe(201)
      await eventually(() => receiver.current.messageIds.includes(event.body.id))
    })

    it('is waited for by the outcome of an attempt that began before a disable, while it is being enabled again, and the delivery is then due', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      let answer!: () => void
      receiver.current.respond = () => ({ status: 500, until: new Promise<void>((resolve) => (answer = resolve)) })
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['a.*'])
      const published = await api.post<{ id: string }>('/webhooks/events', { type: 'a.b', data: {} })
      await eventually(() => receiver.current.requests.length === 1)
      expect((await api.patch(`/webhooks/endpoints/${endpoint.id}`, { status: 'disabled' })).status).toBe(200)

      const { db, holder, release } = await halfEnabled(endpoint.id)
      try {
        answer()
        await lockWaiters(db, 1)
        await release()
      } finally {
        await holder.commit()
      }

      const delivery = await eventually(async () => {
        const found = (await api.get<{ data: Delivery[] }>(`/webhooks/deliveries?event_id=${published.body.id}`)).body.data[0]
        return found?.attempt_count === 1 && found
      })
      expect([delivery.status, delivery.last_response_status]).toEqual(['pending', 500])
      expect(delivery.next_attempt_at).not.toBeNull()
    })
  })

  describe('a claim on PostgreSQL', () => {
    const h = useHerald(dialect, LOCAL_DELIVERY)
    const receiver = useReceiver()

    it('does not deadlock with a disable of a rate-limited endpoint', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['a.*'], { rate_limit: 100 })
      const db = h.current.herald.database.db
      await subscribedEndpoint(api, receiver.current.url, ['b.*'])
      // A disable's statements, the endpoint's row and then its waiting deliveries, around the worker's claims. The
      // row is locked for share first, which the claim's lock conflicts with as it does with the disable's, and
      // which lets the publishes below through: they lock the endpoints they deliver to for key share.
      const holder = await LockHolder.take(db, sql`select id from webhook_endpoints where id = ${endpoint.id} for share`)
      let published, later
      try {
        published = await api.post<{ id: string }>('/webhooks/events', { type: 'a.b', data: {} })
        later = await api.post<{ id: string }>('/webhooks/events', { type: 'b.c', data: {} })
        // A claim leaves the locked endpoint for later and goes on with the others. (It used to lease the first
        // delivery, wait for the endpoint's row, and deadlock with the statements below.)
        await eventually(() => receiver.current.messageIds.includes(later!.body.id))
        await holder.run(sql`update webhook_endpoints set status = 'disabled', disabled_reason = 'manual' where id = ${endpoint.id}`)
        await holder.run(sql`update webhook_deliveries set status = 'held', next_attempt_at = null where endpoint_id = ${endpoint.id} and status = 'pending' and lease_token is null`)
      } finally {
        await holder.commit()
      }

      const delivery = await api.get<{ data: Delivery[] }>(`/webhooks/deliveries?event_id=${published.body.id}`)
      expect(delivery.body.data.map((d) => d.status)).toEqual(['held'])
      expect(h.current.logs.filter((line) => line.includes('pass failed'))).toEqual([])
      expect(receiver.current.messageIds).toEqual([later.body.id])
    })
  })

  describe('a claim and a status sweep on PostgreSQL, run by the test (no worker)', () => {
    const h = useHerald(dialect, { ...LOCAL_DELIVERY, worker: false })
    const receiver = useReceiver()

    /** An endpoint of a new account, subscribed to `a.*`. */
    async function newEndpoint() {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const endpoint = await subscribedEndpoint(api, receiver.current.url, ['a.*'])
      return { account, api, endpoint, herald: h.current.herald, db: h.current.herald.database.db }
    }

    it('a claim leases nothing of an endpoint disabled after it looked at the endpoints, whose sweep has not reached its deliveries', async () => {
      const { account, endpoint, herald, db } = await newEndpoint()
      await insertBacklog(db, account.id, endpoint.id, 'pending', 10, herald.clock.now())
      const queue = new DeliveryQueue(db, herald.database.dialect, herald.clock, herald.settings, herald.webhooks.endpoints, new Outbox(herald.notifications))

      // The claim reads the endpoints (active) and then waits to count its leases; meanwhile a disable commits, whose
      // sweep would hold the deliveries later. (Without asking again whether the endpoint is active, the claim leased
      // all 10 of the disabled endpoint's deliveries, for the worker to send.)
      const holder = await LockHolder.take(db, sql`lock table webhook_leases in share mode`)
      let claimed
      try {
        claimed = queue.claim(DEFAULT_WORKER_OPTIONS.batch, 60_000, new Map())
        await lockWaiters(db, 1)
        await db.updateTable('webhook_endpoints').set({ status: 'disabled', disabled_reason: 'manual', disabled_at: herald.clock.now() }).where('id', '=', endpoint.id).execute()
      } finally {
        await holder.commit()
      }

      expect((await claimed).deliveries).toEqual([])
      expect(await deliveryStatuses(db, endpoint.id)).toEqual({ pending: 10 })
      expect(await db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', endpoint.id).where('lease_token', 'is not', null).execute()).toEqual([])
    })

    it('a status sweep waits for a disable in progress, then ends without releasing anything', async () => {
      const { account, api, endpoint, herald, db } = await newEndpoint()
      const batch = DEFAULT_WORKER_OPTIONS.batch
      expect((await api.patch(`/webhooks/endpoints/${endpoint.id}`, { status: 'disabled' })).status).toBe(200)
      await insertBacklog(db, account.id, endpoint.id, 'held', batch + 100, herald.clock.now())
      expect((await api.patch(`/webhooks/endpoints/${endpoint.id}`, { status: 'active' })).status).toBe(200)
      expect(await deliveryStatuses(db, endpoint.id)).toEqual({ pending: batch, held: 100 })

      // A disable's statements: the endpoint's row, then the deliveries the enable released. The sweep's batch waits
      // for the row and then finds the endpoint disabled. (Read without the lock, the status was still active, and
      // the batch released the last 100 deliveries of a disabled endpoint.)
      const holder = await LockHolder.take(db, sql`select id from webhook_endpoints where id = ${endpoint.id} for update`)
      let swept
      try {
        await holder.run(sql`update webhook_endpoints set status = 'disabled', disabled_reason = 'manual' where id = ${endpoint.id}`)
        swept = herald.webhooks.sweeps.runBatch()
        await lockWaiters(db, 1)
        await holder.run(sql`update webhook_deliveries set status = 'held', next_attempt_at = null where endpoint_id = ${endpoint.id} and status = 'pending'`)
      } finally {
        await holder.commit()
      }

      expect(await swept).toBe(true)
      expect(await deliveryStatuses(db, endpoint.id)).toEqual({ held: batch + 100 })
      expect(await db.selectFrom('webhook_sweeps').select('id').where('endpoint_id', '=', endpoint.id).execute()).toEqual([])
    })
  })
})
