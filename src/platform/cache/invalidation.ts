import type { Notifications } from '../notifications/notifications.js'
import type { Tx } from '../storage/transaction.js'
import type { Clock } from '../clock.js'
import { type CacheOptions, TtlCache } from './ttl-cache.js'
import type { Change, ChangeSink } from './change-feed.js'

/** The in-process caches, by the kind of row they hold. */
/**
 * `webhook_endpoints` is keyed by endpoint id, `webhook_routes` (who subscribes to what) by account id,
 * `device_authorizations` by the digest of the device code, `revocations` by the revocation itself (see
 * KnownRevocations).
 */
export type CacheTopic = 'account' | 'client' | 'keys' | 'settings' | 'webhook_endpoints' | 'webhook_routes' | 'device_authorizations' | 'revocations'

type Listener = (topic: string, key: string) => void

/**
 * Tells every cache that a row changed, once the change has committed: in this process at once, on PostgreSQL in
 * every other process through NOTIFY, and in every process through the change log it appends to, which each reads
 * about once a second (ChangeFeed): that covers the processes no notification reaches (an operator CLI on a SQLite
 * file) and the notifications lost while a listener reconnected.
 */
export class CacheInvalidation implements ChangeSink {
  readonly #listeners: Listener[] = []
  readonly #flushListeners: Array<() => void> = []

  constructor(
    private readonly notifications: Notifications,
    private readonly clock: Clock,
    /** How long an entry is served at most, for changes written without Herald (by hand in the database). */
    private readonly ttlMs: number,
    /** The most entries each cache made here keeps (`HERALD_CACHE_SIZE`). */
    private readonly maxEntries: number,
  ) {
    notifications.on('herald_cache', (payload) => {
      const separator = payload.indexOf(':')
      if (separator > 0) this.changed({ topic: payload.slice(0, separator), key: payload.slice(separator + 1) })
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
    this.follow(topic, (key) => cache.delete(keyOf(key)), () => cache.clear())
    return cache
  }

  /** Tells `onChange` each key of `topic` that changed, once its change has committed, and `onFlush` to forget all. */
  follow(topic: CacheTopic, onChange: (key: string) => void, onFlush: () => void): void {
    this.#listeners.push((changedTopic, key) => changedTopic === topic && onChange(key))
    this.#flushListeners.push(onFlush)
  }

  /** Records that `key` of `topic` changes in `tx`; caches drop it once the transaction has committed. */
  async record(tx: Tx, topic: CacheTopic, key: string): Promise<void> {
    await tx.db.insertInto('cache_changes').values({ topic, key, changed_at: this.clock.now() }).execute()
    await this.notifications.send(tx, 'herald_cache', `${topic}:${key}`)
  }

  /** A change heard of, from a notification or the change log: the caches of its topic drop its key. */
  changed({ topic, key }: Change): void {
    for (const listener of this.#listeners) listener(topic, key)
  }

  forgetAll(): void {
    for (const listener of this.#flushListeners) listener()
  }
}
