import type { Notifications } from '../notifications/notifications.js'
import type { Tx } from '../storage/transaction.js'
import type { Clock } from '../clock.js'
import { type CacheOptions, TtlCache } from './ttl-cache.js'

/** The in-process caches, by the kind of row they hold. */
/** `webhook_endpoints` is keyed by endpoint id, `webhook_routes` (who subscribes to what) by account id. */
export type CacheTopic = 'account' | 'client' | 'keys' | 'settings' | 'webhook_endpoints' | 'webhook_routes'

type Listener = (topic: CacheTopic, key: string) => void

/**
 * Tells every cache, in this process and (on PostgreSQL) in every other process sharing the database, that a
 * row changed, once the change has committed. When the notification listener was disconnected, all caches are
 * flushed, because notifications sent meanwhile are gone. On SQLite (one server process) other processes'
 * changes, such as an operator CLI command, are picked up within the caches' time-to-live.
 */
export class CacheInvalidation {
  readonly #listeners: Listener[] = []
  readonly #flushListeners: Array<() => void> = []

  constructor(
    private readonly notifications: Notifications,
    private readonly clock: Clock,
    /** The staleness bound of every cache made here, for changes no notification reports. */
    private readonly ttlMs: number,
    /** The most entries each cache made here keeps (`HERALD_CACHE_SIZE`). */
    private readonly maxEntries: number,
  ) {
    notifications.on('herald_cache', (payload) => {
      const separator = payload.indexOf(':')
      if (separator > 0) this.#dispatch(payload.slice(0, separator) as CacheTopic, payload.slice(separator + 1))
    })
    notifications.onReconnect(() => {
      for (const listener of this.#flushListeners) listener()
    })
  }

  /**
   * A read-through cache that forgets a key when `topic` reports it changed, and everything after a flush.
   * `keyOf` maps a changed row's key to the cache's own, for caches that hold a group of rows per key; `batch` is
   * TtlCache's.
   */
  cache<V>(
    topic: CacheTopic,
    { keyOf = (changed) => changed, ...options }: { keyOf?: (changed: string) => string } & Omit<CacheOptions<V>, 'maxEntries'> = {},
  ): TtlCache<V> {
    const cache = new TtlCache<V>(this.ttlMs, this.clock, { ...options, maxEntries: this.maxEntries })
    this.#listeners.push((changedTopic, key) => changedTopic === topic && cache.delete(keyOf(key)))
    this.#flushListeners.push(() => cache.clear())
    return cache
  }

  /** Records that `key` of `topic` changes in `tx`; caches drop it once the transaction has committed. */
  async changed(tx: Tx, topic: CacheTopic, key: string): Promise<void> {
    await this.notifications.send(tx, 'herald_cache', `${topic}:${key}`)
  }

  #dispatch(topic: CacheTopic, key: string): void {
    for (const listener of this.#listeners) listener(topic, key)
  }
}
