import { createHash } from 'node:crypto'
import type { Kysely } from 'kysely'
import { type Clock, toRfc3339 } from '../../platform/clock.js'
import { ProblemError, notFound } from '../../platform/http/problems.js'
import { looksLikeId, newId } from '../../platform/ids.js'
import { decodeCursor, type Page, toPage } from '../../platform/pagination.js'
import type { DB, EventsTable } from '../../platform/storage/schema.js'
import { GroupCommit, type ItemOutcome } from '../../platform/storage/group-commit.js'
import { type Tx, transaction } from '../../platform/storage/transaction.js'
import type { FanOut } from '../delivery/fan-out.js'
import { BUILT_IN_EVENT_TYPES, type EventTypeDescription, isReservedType, isValidTypeName } from './event-types.js'

export interface EventView {
  id: string
  type: string
  data: unknown
  idempotency_key: string | null
  created_at: string
}

export interface PublishInput {
  type: string
  data: Record<string, unknown>
  idempotency_key?: string
}

/** How long an idempotency key answers with its original event. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000
/** Custom types this process knows are recorded; past this many it forgets them all and re-learns. */
const KNOWN_TYPES_LIMIT = 10_000

/** Publishes committed together at most; far below either dialect's limit on bound parameters. */
const PUBLISH_BATCH = 200

export interface Published {
  event: EventView
  /** False: an idempotent replay answered with the original event. */
  created: boolean
}

/** A validated publish waiting for its batch. */
interface PendingPublish {
  accountId: string
  type: string
  data: Record<string, unknown>
  key: string | null
  /** Set when `key` is: what a replay with the same key must match. */
  requestHash: string | null
}

/**
 * Events as callers publish and read them. A published event is stored and fanned out in one transaction, which
 * concurrent publishes share (see GroupCommit). An idempotency key makes a retried publish safe: within 24 hours
 * the same key and body answer with the original event and create nothing; the same key with another body is a
 * conflict. Each publish gets exactly the answer it would get if the batch's publishes ran one after another.
 */
export class Events {
  readonly #knownCustomTypes = new Set<string>()
  readonly #publishing: GroupCommit<PendingPublish, Published>

  constructor(
    private readonly db: Kysely<DB>,
    private readonly fanOut: FanOut,
    private readonly clock: Clock,
    concurrentTransactions: number,
  ) {
    this.#publishing = new GroupCommit((batch) => transaction(db, (tx) => this.#publishBatch(tx, batch)), { concurrency: concurrentTransactions, maxBatch: PUBLISH_BATCH })
  }

  publish(accountId: string, input: PublishInput): Promise<Published> {
    if (!isValidTypeName(input.type)) {
      throw new ProblemError('validation_failed', 'type must be dot-separated words of letters, digits, _ and - (at most 128 characters)', [{ pointer: '/body/type', message: 'is not a valid event type' }])
    }
    if (isReservedType(input.type)) {
      throw new ProblemError('validation_failed', 'types starting with oauth. or webhook. are Herald\'s own', [{ pointer: '/body/type', message: 'uses a reserved prefix' }])
    }
    const key = input.idempotency_key ?? null
    const requestHash = key === null ? null : createHash('sha256').update(canonicalJson({ type: input.type, data: input.data })).digest('base64url')
    return this.#publishing.submit({ accountId, type: input.type, data: input.data, key, requestHash })
  }

  async #publishBatch(tx: Tx, batch: readonly PendingPublish[]): Promise<Array<ItemOutcome<Published>>> {
    const now = this.clock.now()
    const rows = batch.map((item): EventsTable => ({
      id: newId('evt', now),
      account_id: item.accountId,
      type: item.type,
      data: JSON.stringify(item.data),
      created_at: now,
      fanned_out_at: now,
      idempotency_key: item.key,
    }))
    // The caller's data goes back as given: no need to parse what was just serialised.
    const views = rows.map((row, index) => eventView(row, batch[index]!.data))
    const replays = await this.#claimKeys(tx, batch, rows, views, now)
    const created = rows.filter((_row, index) => !replays.has(index))
    if (created.length > 0) {
      await tx.db.insertInto('events').values(created).execute()
      await this.fanOut.deliver(tx, created, now)
      await this.#recordCustomTypes(tx, created, now)
    }
    return views.map((event, index) => replays.get(index) ?? { value: { event, created: true } })
  }

  /**
   * Claims the batch's idempotency keys, each unless a live claim exists (an expired one is taken over), in one
   * statement, so two concurrent publishes with one key can't both win. Answers, by position in the batch, the
   * publishes that replay an earlier event or conflict with it instead of creating one. A key given twice in
   * one batch is claimed by its first publish; the later ones replay it.
   */
  async #claimKeys(tx: Tx, batch: readonly PendingPublish[], rows: readonly EventsTable[], views: readonly EventView[], now: number): Promise<Map<number, ItemOutcome<Published>>> {
    const claimants = new Map<string, number>()
    batch.forEach((item, index) => {
      const name = keyName(item)
      if (name !== null && !claimants.has(name)) claimants.set(name, index)
    })
    const answers = new Map<number, ItemOutcome<Published>>()
    if (claimants.size === 0) return answers
    // In key order, so concurrent batches lock the keys they share in the same order and never deadlock.
    const claiming = [...claimants].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, index]) => index)
    const claimed = await tx.db
      .insertInto('event_idempotency_keys')
      .values(claiming.map((index) => ({ account_id: batch[index]!.accountId, key: batch[index]!.key!, event_id: rows[index]!.id, request_hash: batch[index]!.requestHash!, expires_at: now + IDEMPOTENCY_WINDOW_MS })))
      .onConflict((conflict) =>
        conflict
          .columns(['account_id', 'key'])
          .doUpdateSet((eb) => ({ event_id: eb.ref('excluded.event_id'), request_hash: eb.ref('excluded.request_hash'), expires_at: eb.ref('excluded.expires_at') }))
          .where('event_idempotency_keys.expires_at', '<=', now),
      )
      .returning('event_id')
      .execute()
    const won = new Set(claimed.map((row) => row.event_id))
    // What each key's later publishes are compared with: the live claim's original, or this batch's winner.
    const originals = new Map<string, { event: EventView; requestHash: string }>()
    for (const [name, index] of claimants) {
      if (won.has(rows[index]!.id)) originals.set(name, { event: views[index]!, requestHash: batch[index]!.requestHash! })
    }
    const lost = [...claimants].filter(([name]) => !originals.has(name))
    if (lost.length > 0) {
      const found = await tx.db
        .selectFrom('event_idempotency_keys as k')
        .innerJoin('events as e', 'e.id', 'k.event_id')
        .select(['k.account_id as claim_account_id', 'k.key as claim_key', 'k.request_hash', 'e.id', 'e.account_id', 'e.type', 'e.data', 'e.created_at', 'e.fanned_out_at', 'e.idempotency_key'])
        .where((eb) => eb.or(lost.map(([, index]) => eb.and([eb('k.account_id', '=', batch[index]!.accountId), eb('k.key', '=', batch[index]!.key!)]))))
        .execute()
      for (const { claim_account_id: accountId, claim_key: key, request_hash: requestHash, ...event } of found) {
        originals.set(keyName({ accountId, key })!, { event: toView(event), requestHash })
      }
    }
    batch.forEach((item, index) => {
      const name = keyName(item)
      if (name === null || won.has(rows[index]!.id)) return
      const original = originals.get(name)
      if (!original) throw new Error(`The idempotency key ${item.key} is claimed by an event that no longer exists`)
      answers.set(
        index,
        original.requestHash === item.requestHash
          ? { value: { event: original.event, created: false } }
          : { error: new ProblemError('conflict', 'This idempotency_key was used within 24 hours with a different type or data') },
      )
    })
    return answers
  }

  /** Remembers the types the account has published, for the event-type catalog; each once per process. */
  async #recordCustomTypes(tx: Tx, events: readonly EventsTable[], now: number): Promise<void> {
    const unknown = new Map<string, { account_id: string; name: string; first_published_at: number }>()
    for (const event of events) {
      const typeKey = `${event.account_id}:${event.type}`
      if (!this.#knownCustomTypes.has(typeKey)) unknown.set(typeKey, { account_id: event.account_id, name: event.type, first_published_at: now })
    }
    if (unknown.size === 0) return
    await tx.db.insertInto('custom_event_types').values([...unknown.values()]).onConflict((c) => c.doNothing()).execute()
    tx.afterCommit(() => {
      if (this.#knownCustomTypes.size + unknown.size > KNOWN_TYPES_LIMIT) this.#knownCustomTypes.clear()
      for (const typeKey of unknown.keys()) this.#knownCustomTypes.add(typeKey)
    })
  }

  async get(accountId: string, eventId: string): Promise<EventView> {
    const row = looksLikeId('evt', eventId)
      ? await this.db.selectFrom('events').selectAll().where('account_id', '=', accountId).where('id', '=', eventId).executeTakeFirst()
      : undefined
    if (!row) throw notFound(`Event ${eventId}`)
    return toView(row)
  }

  /** Newest first. */
  async list(accountId: string, limit: number, cursor: string | undefined, type: string | undefined): Promise<Page<EventView>> {
    const before = decodeCursor(cursor)
    let query = this.db.selectFrom('events').selectAll().where('account_id', '=', accountId).orderBy('id', 'desc').limit(limit + 1)
    if (before !== undefined) query = query.where('id', '<', before)
    if (type !== undefined) query = query.where('type', '=', type)
    const rows = await query.execute()
    return toPage(rows, limit, (row) => row.id, toView)
  }

  /** Herald's own types, then the custom types the account has published. */
  async types(accountId: string): Promise<Array<EventTypeDescription & { custom: boolean }>> {
    const custom = await this.db.selectFrom('custom_event_types').select('name').where('account_id', '=', accountId).orderBy('name').execute()
    return [
      ...BUILT_IN_EVENT_TYPES.map((type) => ({ ...type, custom: false })),
      ...custom.map((row) => ({ name: row.name, description: 'Published by the account', example: {}, custom: true })),
    ]
  }
}

export function toView(row: EventsTable): EventView {
  return eventView(row, JSON.parse(row.data) as unknown)
}

function eventView(row: EventsTable, data: unknown): EventView {
  return { id: row.id, type: row.type, data, idempotency_key: row.idempotency_key, created_at: toRfc3339(row.created_at) }
}

/** JSON with object keys sorted at every depth: two bodies that mean the same hash the same. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`
  }
  return JSON.stringify(value)
}

/** The idempotency key's identity: keys are per account. */
function keyName(item: { accountId: string; key: string | null }): string | null {
  return item.key === null ? null : `${item.accountId}\n${item.key}`
}
