import { createHash } from 'node:crypto'
import type { Kysely } from 'kysely'
import { type Clock, toRfc3339 } from '../../platform/clock.js'
import { ProblemError, notFound } from '../../platform/http/problems.js'
import { looksLikeId, newId } from '../../platform/ids.js'
import { decodeCursor, type Page, toPage } from '../../platform/pagination.js'
import type { DB, EventsTable } from '../../platform/storage/schema.js'
import { transaction } from '../../platform/storage/transaction.js'
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

/**
 * Events as callers publish and read them. A published event is stored and fanned out in one transaction. An
 * idempotency key makes a retried publish safe: within 24 hours the same key and body answer with the original
 * event and create nothing; the same key with another body is a conflict.
 */
export class Events {
  readonly #knownCustomTypes = new Set<string>()

  constructor(
    private readonly db: Kysely<DB>,
    private readonly fanOut: FanOut,
    private readonly clock: Clock,
  ) {}

  /** Answers the event, and whether this call created it (false: an idempotent replay). */
  async publish(accountId: string, input: PublishInput): Promise<{ event: EventView; created: boolean }> {
    if (!isValidTypeName(input.type)) {
      throw new ProblemError('validation_failed', 'type must be dot-separated words of letters, digits, _ and - (at most 128 characters)', [{ pointer: '/body/type', message: 'is not a valid event type' }])
    }
    if (isReservedType(input.type)) {
      throw new ProblemError('validation_failed', 'types starting with oauth. or webhook. are Herald\'s own', [{ pointer: '/body/type', message: 'uses a reserved prefix' }])
    }
    const dataText = JSON.stringify(input.data)
    return transaction(this.db, async (tx) => {
      const now = this.clock.now()
      const id = newId('evt', now)
      const key = input.idempotency_key ?? null
      if (key !== null) {
        const requestHash = createHash('sha256').update(canonicalJson({ type: input.type, data: input.data })).digest('base64url')
        // Claims the key unless a live claim exists; an expired one is taken over. One statement, so two
        // concurrent publishes with one key can't both win.
        const claimed = await tx.db
          .insertInto('event_idempotency_keys')
          .values({ account_id: accountId, key, event_id: id, request_hash: requestHash, expires_at: now + IDEMPOTENCY_WINDOW_MS })
          .onConflict((conflict) =>
            conflict
              .columns(['account_id', 'key'])
              .doUpdateSet((eb) => ({ event_id: eb.ref('excluded.event_id'), request_hash: eb.ref('excluded.request_hash'), expires_at: eb.ref('excluded.expires_at') }))
              .where('event_idempotency_keys.expires_at', '<=', now),
          )
          .returning('event_id')
          .executeTakeFirst()
        if (claimed?.event_id !== id) {
          const original = await tx.db.selectFrom('event_idempotency_keys').selectAll().where('account_id', '=', accountId).where('key', '=', key).executeTakeFirstOrThrow()
          if (original.request_hash !== requestHash) {
            throw new ProblemError('conflict', 'This idempotency_key was used within 24 hours with a different type or data')
          }
          const event = await tx.db.selectFrom('events').selectAll().where('id', '=', original.event_id).executeTakeFirstOrThrow()
          return { event: toView(event), created: false }
        }
      }
      const row: EventsTable = { id, account_id: accountId, type: input.type, data: dataText, created_at: now, fanned_out_at: now, idempotency_key: key }
      await tx.db.insertInto('events').values(row).execute()
      await this.fanOut.deliver(tx, [row], now)
      const typeKey = `${accountId}:${input.type}`
      if (!this.#knownCustomTypes.has(typeKey)) {
        await tx.db.insertInto('custom_event_types').values({ account_id: accountId, name: input.type, first_published_at: now }).onConflict((c) => c.doNothing()).execute()
        if (this.#knownCustomTypes.size >= KNOWN_TYPES_LIMIT) this.#knownCustomTypes.clear()
        tx.afterCommit(() => this.#knownCustomTypes.add(typeKey))
      }
      return { event: toView(row), created: true }
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
  return { id: row.id, type: row.type, data: JSON.parse(row.data) as unknown, idempotency_key: row.idempotency_key, created_at: toRfc3339(row.created_at) }
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
