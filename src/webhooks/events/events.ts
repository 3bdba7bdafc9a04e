import { createHash } from 'node:crypto'
import type { Kysely } from 'kysely'
import { canonicalJson } from '../../platform/canonical-json.js'
import { type Clock, toRfc3339 } from '../../platform/clock.js'
import { ProblemError, notFound } from '../../platform/http/problems.js'
import { looksLikeId, newId } from '../../platform/ids.js'
import { decodeCursor, type Page, toPage } from '../../platform/pagination.js'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { CustomEventTypesTable, DB, EventIdempotencyKeysTable, EventsTable } from '../../platform/storage/schema.js'
import { Batcher, type ItemOutcome } from '../../platform/storage/batcher.js'
import type { FanOut } from '../delivery/fan-out.js'
import { BUILT_IN_EVENT_TYPES, type EventTypeDescription, isReservedType, isValidTypeName } from './event-types.js'
import { publishSqlFor } from './sql/index.js'
import { type PublishSql, typesWritten, writtenEvents } from './sql/publish-sql.js'

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

/** A batch of publishes, with what each may write worked out before anything is. */
interface Batch {
  now: number
  items: readonly PendingPublish[]
  /** By position in `items`: the event each would create. */
  rows: readonly EventsTable[]
  views: readonly EventView[]
  /** Each key's first publish in the batch, the one that claims it (by key name, see keyName). */
  claimants: ReadonlyMap<string, number>
  /** The claims, each key once, in key order (see claimKeys). */
  claims: readonly EventIdempotencyKeysTable[]
  /** The events written unless their key is already claimed: the keyless ones and the claimants'. */
  candidates: readonly EventsTable[]
}

/** What a key's later publishes are compared with: the event that holds it, and the request that created it. */
interface Original {
  event: EventView
  requestHash: string
}

/**
 * Events as callers publish and read them. A published event is stored and fanned out atomically, together with
 * concurrent publishes (see Batcher and PublishSql). An idempotency key makes a retried publish safe: within 24 hours the same key and body
 * answer with the original event and create nothing; the same key with another body is a conflict. Each publish
 * gets exactly the answer it would get if the batch's publishes ran one after another.
 */
export class Events {
  readonly #knownCustomTypes = new Set<string>()
  readonly #publishing: Batcher<PendingPublish, Published>
  readonly #sql: PublishSql

  constructor(
    private readonly db: Kysely<DB>,
    fanOut: FanOut,
    private readonly clock: Clock,
    dialect: SqlDialect,
  ) {
    this.#sql = publishSqlFor(dialect, db, fanOut)
    this.#publishing = new Batcher((items) => this.#commit(this.#batch(items)), { concurrency: dialect.concurrentTransactions, maxBatch: PUBLISH_BATCH })
  }

  publish(accountId: string, input: PublishInput): Promise<Published> {
    if (!isValidTypeName(input.type)) {
      throw new ProblemError('validation_failed', 'type must be dot-separated words of letters, digits, _ and - (at most 128 characters)', [{ pointer: '/body/type', message: 'is not a valid event type' }])
    }
    if (isReservedType(input.type)) {
      throw new ProblemError('validation_failed', "oauth, webhook and the types under them are Herald's own", [{ pointer: '/body/type', message: 'is in a reserved namespace' }])
    }
    const key = input.idempotency_key ?? null
    const requestHash = key === null ? null : createHash('sha256').update(canonicalJson({ type: input.type, data: input.data })).digest('base64url')
    return this.#publishing.submit({ accountId, type: input.type, data: input.data, key, requestHash })
  }

  #batch(items: readonly PendingPublish[]): Batch {
    const now = this.clock.now()
    const rows = items.map((item): EventsTable => ({
      id: newId('evt', now),
      account_id: item.accountId,
      type: item.type,
      data: JSON.stringify(item.data),
      created_at: now,
      fanned_out_at: now,
      idempotency_key: item.key,
    }))
    // The caller's data goes back as given: no need to parse what was just serialised.
    const views = rows.map((row, index) => eventView(row, items[index]!.data))
    // A key given twice in one batch is claimed by its first publish; the later ones replay it.
    const claimants = new Map<string, number>()
    items.forEach((item, index) => {
      const name = keyName(item)
      if (name !== null && !claimants.has(name)) claimants.set(name, index)
    })
    const claims = [...claimants]
      .sort(byKey)
      .map(([, index]) => ({ account_id: items[index]!.accountId, key: items[index]!.key!, event_id: rows[index]!.id, request_hash: items[index]!.requestHash!, expires_at: now + IDEMPOTENCY_WINDOW_MS }))
    const claimantIndexes = new Set(claimants.values())
    const candidates = rows.filter((row, index) => row.idempotency_key === null || claimantIndexes.has(index))
    return { now, items, rows, views, claimants, claims, candidates }
  }

  /** Writes a batch (see PublishSql) and answers each of its publishes. */
  async #commit(batch: Batch): Promise<Array<ItemOutcome<Published>>> {
    const types = this.#unknownTypes(batch.candidates, batch.now)
    const { claimed, answered } = await this.#sql.write({ now: batch.now, claims: batch.claims, events: batch.candidates, types }, (db, won) => this.#answers(db, batch, won))
    this.#learnTypes(typesWritten(types, writtenEvents(batch.candidates, claimed)))
    return answered
  }

  /**
   * Each publish's answer, given the claims won (by event id): its own event, or for a key claimed before, a replay
   * of the original or a conflict with it. Never throws: an original that can't be read fails its publishes alone.
   */
  async #answers(db: Kysely<DB>, batch: Batch, won: ReadonlySet<string>): Promise<Array<ItemOutcome<Published>>> {
    const originals = new Map<string, Original>()
    for (const [name, index] of batch.claimants) {
      if (won.has(batch.rows[index]!.id)) originals.set(name, { event: batch.views[index]!, requestHash: batch.items[index]!.requestHash! })
    }
    const lost = [...batch.claimants.keys()].filter((name) => !originals.has(name))
    let unreadable: Error | undefined
    if (lost.length > 0) {
      try {
        for (const [name, original] of await readOriginals(db, lost.map((name) => batch.items[batch.claimants.get(name)!]!))) originals.set(name, original)
      } catch (error) {
        unreadable = error as Error
      }
    }
    return batch.items.map((item, index) => {
      const name = keyName(item)
      if (name === null || won.has(batch.rows[index]!.id)) return { value: { event: batch.views[index]!, created: true } }
      const original = originals.get(name)
      if (!original) return { error: unreadable ?? new Error(`The idempotency key ${item.key} is claimed by an event that no longer exists`) }
      return original.requestHash === item.requestHash
        ? { value: { event: original.event, created: false } }
        : { error: new ProblemError('conflict', 'This idempotency_key was used within 24 hours with a different type or data') }
    })
  }

  /** The custom types of `events` this process doesn't know to be recorded, for the event-type catalog; in key order. */
  #unknownTypes(events: readonly EventsTable[], now: number): CustomEventTypesTable[] {
    const unknown = new Map<string, CustomEventTypesTable>()
    for (const event of events) {
      const key = typeKey(event.account_id, event.type)
      if (!this.#knownCustomTypes.has(key)) unknown.set(key, { account_id: event.account_id, name: event.type, first_published_at: now })
    }
    return [...unknown].sort(byKey).map(([, type]) => type)
  }

  /** Remembers types as recorded once they have committed, so each is written once per process. */
  #learnTypes(types: readonly CustomEventTypesTable[]): void {
    if (this.#knownCustomTypes.size + types.length > KNOWN_TYPES_LIMIT) this.#knownCustomTypes.clear()
    for (const type of types) this.#knownCustomTypes.add(typeKey(type.account_id, type.name))
  }

  async get(accountId: string, eventId: string): Promise<EventView> {
    const row = looksLikeId('evt', eventId)
      ? await forAccount(this.db, accountId).selectFrom('events').selectAll().where('id', '=', eventId).executeTakeFirst()
      : undefined
    if (!row) throw notFound(`Event ${eventId}`)
    return toView(row)
  }

  /** Newest first. */
  async list(accountId: string, limit: number, cursor: string | undefined, type: string | undefined): Promise<Page<EventView>> {
    const before = decodeCursor(cursor)
    let query = forAccount(this.db, accountId).listFrom('events', 'desc').selectAll().limit(limit + 1)
    if (before !== undefined) query = query.where('id', '<', before)
    if (type !== undefined) query = query.where('type', '=', type)
    const rows = await query.execute()
    return toPage(rows, limit, (row) => row.id, toView)
  }

  /** Herald's own types, then the custom types the account has published. */
  async types(accountId: string): Promise<Array<EventTypeDescription & { custom: boolean }>> {
    const custom = await forAccount(this.db, accountId).selectFrom('custom_event_types').select('name').orderBy('name').execute()
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

/** The idempotency key's identity: keys are per account. */
function keyName(item: { accountId: string; key: string | null }): string | null {
  return item.key === null ? null : `${item.accountId}\n${item.key}`
}

function typeKey(accountId: string, type: string): string {
  return `${accountId}:${type}`
}

/** Orders entries by key, in code-unit order: the same in every process, as lock ordering needs. */
function byKey([a]: readonly [string, unknown], [b]: readonly [string, unknown]): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** The originals of keys this batch lost, by key name. */
async function readOriginals(db: Kysely<DB>, items: readonly PendingPublish[]): Promise<Map<string, Original>> {
  const found = await db
    .selectFrom('event_idempotency_keys as k')
    .innerJoin('events as e', (join) => join.onRef('e.account_id', '=', 'k.account_id').onRef('e.id', '=', 'k.event_id'))
    .select(['k.account_id as claim_account_id', 'k.key as claim_key', 'k.request_hash', 'e.id', 'e.account_id', 'e.type', 'e.data', 'e.created_at', 'e.fanned_out_at', 'e.idempotency_key'])
    .where((eb) => eb.or(items.map((item) => eb.and([eb('k.account_id', '=', item.accountId), eb('k.key', '=', item.key!)]))))
    .execute()
  return new Map(found.map(({ claim_account_id: accountId, claim_key: key, request_hash: requestHash, ...event }) => [keyName({ accountId, key })!, { event: toView(event), requestHash }]))
}
