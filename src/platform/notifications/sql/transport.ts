import type { Kysely, RawBuilder } from 'kysely'
import type { DB } from '../../storage/schema.js'
import type { Channel } from '../notifications.js'

/** Where a transport hands what it hears. */
export interface NotificationSink {
  dispatch(channel: Channel, payload: string): void
  /** The listening connection was lost and is back: signals sent meanwhile are gone. */
  reconnected(): void
}

/**
 * How signals travel between processes sharing the database: PostgreSQL's NOTIFY and LISTEN; on SQLite, one server
 * process, nothing travels. One implementation per dialect, chosen in ./index.ts.
 */
export interface NotificationTransport {
  /** Sends `payload` on `channel` through `db`: inside a transaction PostgreSQL delivers it on commit. */
  notify(db: Kysely<DB>, channel: Channel, payload: string): Promise<void>
  /**
   * An expression that sends `payload` on `channel` when a writing statement evaluates it (in its RETURNING), as
   * `notify` would, without a statement of its own; undefined where nothing travels.
   */
  inStatement(channel: Channel, payload: string): RawBuilder<void> | undefined
  /** Listens on `channels` for other processes' signals until closed, hearing them again after a lost connection. */
  listen(channels: readonly Channel[], sink: NotificationSink): Promise<void>
  close(): Promise<void>
}
