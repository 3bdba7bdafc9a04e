import type { Kysely } from 'kysely'
import type { CustomEventTypesTable, DB, EventIdempotencyKeysTable, EventsTable } from '../../../platform/storage/schema.js'

/** A batch of publishes, everything it may write worked out beforehand. */
export interface PublishWrite {
  now: number
  /** Each key once, in key order (see claimKeys). */
  claims: readonly EventIdempotencyKeysTable[]
  /** Written if they have no key, or if their key's claim is won. */
  events: readonly EventsTable[]
  /** Recorded (unless they already are) if an event of theirs is written. */
  types: readonly CustomEventTypesTable[]
}

export interface PublishWritten<T> {
  /** The events whose key's claim was won. */
  claimed: ReadonlySet<string>
  answered: T
}

/**
 * Writing a batch of publishes, atomically: the claims of its keys, the events they allow with their deliveries (see
 * FanOut), and the types of the events written. Then `answer` runs, given the claims won, on a handle that sees what
 * was written. One implementation per dialect, chosen in ./index.ts. Once the batch is written nothing may throw, or
 * Batcher would write its publishes a second time.
 */
export interface PublishSql {
  write<T>(batch: PublishWrite, answer: (db: Kysely<DB>, claimed: ReadonlySet<string>) => Promise<T>): Promise<PublishWritten<T>>
}

/** The events of a batch that are written, given the claims won (by event id). */
export function writtenEvents(events: readonly EventsTable[], claimed: ReadonlySet<string>): EventsTable[] {
  return events.filter((row) => row.idempotency_key === null || claimed.has(row.id))
}

/** The types among `types` that an event of `events` has. */
export function typesWritten(types: readonly CustomEventTypesTable[], events: readonly EventsTable[]): CustomEventTypesTable[] {
  const written = new Set(events.map((event) => `${event.account_id}:${event.type}`))
  return types.filter((type) => written.has(`${type.account_id}:${type.name}`))
}
