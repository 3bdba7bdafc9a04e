import { LRUCache } from 'lru-cache'
import type { Clock } from '../clock.js'
import type { Awaitable } from './awaitable.js'

interface Entry<V> {
  value: V
  /** When the read that produced the value began: the value is at least this fresh. */
  readAt: number
}

export type Loader<V> = () => Promise<V | undefined>

/**
 * Past this share of its time-to-live, a value that is asked for is reloaded in the background while it is still
 * served, so a key in steady use never makes a request wait for its reload. A key nobody asks for just expires.
 */
const REFRESH_AHEAD_SHARE = 0.8

/** Entries a cache keeps when its owner names no bound (`HERALD_CACHE_SIZE` sets the bound of Herald's caches). */
export const DEFAULT_MAX_ENTRIES = 10_000

/**
 * A read-through cache with a time-to-live backstop and a bound on its size: past `maxEntries`, the least recently
 * used entry goes, and expired entries are swept out once per time-to-live, so memory follows the keys in use, not
 * every key ever seen. A value is cached only when the loader finds one: a miss is never cached, so a row created
 * elsewhere is seen at once. Concurrent loads of one key share a single query, and a load that raced an
 * invalidation is not stored, so an invalidation can't be undone by a slow read. No value is served once the
 * time-to-live has passed since its read began.
 */
export class TtlCache<V> {
  readonly #entries: LRUCache<string, Entry<V>>
  readonly #loading = new Map<string, Promise<V | undefined>>()
  /** Bumped by every invalidation; a load stores its result only if the generation is unchanged. */
  #generation = 0
  readonly #refreshAfterMs: number
  #sweptAt: number

  constructor(
    private readonly ttlMs: number,
    private readonly clock: Clock,
    maxEntries = DEFAULT_MAX_ENTRIES,
  ) {
    this.#refreshAfterMs = ttlMs * REFRESH_AHEAD_SHARE
    this.#entries = new LRUCache({ max: maxEntries })
    this.#sweptAt = clock.now()
  }

  /** The value, as it is while cached and fresh (no promise, see `andThen`), else the promise of its load. */
  get(key: string, load: Loader<V>): Awaitable<V | undefined> {
    const entry = this.#entries.get(key)
    if (entry === undefined) return this.#load(key, load)
    const age = this.clock.now() - entry.readAt
    if (age >= this.ttlMs) return this.#load(key, load)
    if (age >= this.#refreshAfterMs && !this.#loading.has(key)) {
      // A failed refresh leaves the entry to expire; the next `get` then loads in the foreground and reports it.
      this.#load(key, load).catch(() => {})
    }
    return entry.value
  }

  /** How many values are cached, fresh or not yet swept. */
  get size(): number {
    return this.#entries.size
  }

  #load(key: string, load: Loader<V>): Promise<V | undefined> {
    const pending = this.#loading.get(key)
    if (pending) return pending
    const generation = this.#generation
    const readAt = this.clock.now()
    this.#sweepExpired(readAt)
    const promise = load()
      .then((value) => {
        if (value === undefined) this.#entries.delete(key)
        else if (generation === this.#generation) this.#entries.set(key, { value, readAt })
        return value
      })
      .finally(() => this.#loading.delete(key))
    this.#loading.set(key, promise)
    return promise
  }

  /** At most once per time-to-live, on a load (never on a hit): drops every entry no `get` would serve any more. */
  #sweepExpired(now: number): void {
    if (now - this.#sweptAt < this.ttlMs) return
    this.#sweptAt = now
    const expired: string[] = []
    for (const [key, entry] of this.#entries.entries()) if (now - entry.readAt >= this.ttlMs) expired.push(key)
    for (const key of expired) this.#entries.delete(key)
  }

  delete(key: string): void {
    this.#generation++
    this.#entries.delete(key)
    this.#loading.delete(key)
  }

  clear(): void {
    this.#generation++
    this.#entries.clear()
    this.#loading.clear()
  }
}
