import { LRUCache } from 'lru-cache'
import type { Clock } from '../clock.js'
import type { Awaitable } from './awaitable.js'

interface Entry<V> {
  value: V
  /** When the read that produced the value began: the value is at least this fresh. */
  readAt: number
  /** From when a `get` reloads it in the background (see REFRESH_AHEAD_SHARE). */
  refreshAt: number
}

export type Loader<V> = () => Promise<V | undefined>

/**
 * Reads many keys in one query: the values found, by key; a key missing from the map has no row, and a key whose
 * row could not be read has its Error, which fails that key's load alone. `cached(key)` is the value the cache holds
 * now, fresh or not: a loader that finds its row unchanged answers with it rather than a new copy, so reloading
 * many entries every few seconds neither rebuilds them nor feeds the garbage collector's old generation.
 */
export type BatchLoader<V> = (keys: readonly string[], cached: (key: string) => V | undefined) => Promise<ReadonlyMap<string, V | Error>>

export interface CacheOptions<V> {
  /** The most entries kept; past it, the least recently used goes first. */
  maxEntries?: number
  /** Loads what `get` is called for without a loader of its own, the keys of one event-loop turn together. */
  batch?: BatchLoader<V>
  /** A number in [0, 1), to spread the entries' refresh points (Math.random unless a test fixes it). */
  random?: () => number
}

/**
 * Past this share of its time-to-live, a value that is asked for is reloaded in the background while it is still
 * served, so a key in use at least every half-lifetime never makes a request wait for its reload. A key nobody asks
 * for just expires.
 */
export const REFRESH_AHEAD_SHARE = 0.5
/**
 * Each entry's refresh point lies at a random place up to this share of the time-to-live later: entries loaded
 * together (every account's, after a restart) would otherwise be reloaded together for ever, in one burst per
 * lifetime.
 */
export const REFRESH_SPREAD_SHARE = 0.25

/** Entries a cache keeps when its owner names no bound (`HERALD_CACHE_SIZE` sets the bound of Herald's caches). */
export const DEFAULT_MAX_ENTRIES = 10_000

/** Keys read by one batched query at most; as many due refreshes are read at once, without gathering more. */
export const BATCH_SIZE = 500

/**
 * A background refresh waits up to this long for others to share its query: nobody waits for it, and with many
 * accounts, each in use now and then, the refreshes of one turn are a few keys, whose query costs far more (in
 * both processes, the database's and this one) than the keys it reads.
 */
export const REFRESH_GATHER_MS = 1000

interface Waiter<V> {
  promise: Promise<V | undefined>
  resolve: (value: V | undefined) => void
  reject: (error: unknown) => void
}

/**
 * A read-through cache with a time-to-live backstop and a bound on its size: past `maxEntries`, the least recently
 * used entry goes, and expired entries are swept out once per time-to-live, so memory follows the keys in use, not
 * every key ever seen. A value is cached only when the loader finds one: a miss is never cached, so a row created
 * elsewhere is seen at once. Concurrent loads of one key share a single query, and a load that raced an
 * invalidation of its key (or a flush) is not stored, so an invalidation can't be undone by a slow read. No value is
 * served once the time-to-live has passed since its read began.
 *
 * With a batch loader, the loads that one turn of the event loop asks for are one query, and background reloads
 * gather for up to REFRESH_GATHER_MS first: with many accounts, each entry is reloaded once per lifetime, and one
 * query per key would cost as much as the requests themselves.
 */
export class TtlCache<V> {
  readonly #entries: LRUCache<string, Entry<V>>
  readonly #loading = new Map<string, Promise<V | undefined>>()
  readonly #batch: BatchLoader<V> | undefined
  readonly #random: () => number
  /** Keys waiting for the next batched query, with whoever waits for each. */
  #queued = new Map<string, Waiter<V>>()
  /** The queued keys are read after this turn's I/O (someone waits), or when #gathering fires (refreshes alone). */
  #flushAfterTurn = false
  #gathering: ReturnType<typeof setTimeout> | undefined
  /** Bumped by every flush; a load stores its result only if the generation is unchanged. */
  #generation = 0
  #sweptAt: number

  constructor(
    private readonly ttlMs: number,
    private readonly clock: Clock,
    options: CacheOptions<V> = {},
  ) {
    this.#random = options.random ?? Math.random
    this.#entries = new LRUCache({ max: options.maxEntries ?? DEFAULT_MAX_ENTRIES })
    this.#batch = options.batch
    this.#sweptAt = clock.now()
  }

  /**
   * The value, as it is while cached and fresh (no promise, see `andThen`), else the promise of its load: by `load`
   * when given, else by the cache's batch loader.
   */
  get(key: string, load?: Loader<V>): Awaitable<V | undefined> {
    const entry = this.#entries.get(key)
    if (entry === undefined) return this.#load(key, load)
    const now = this.clock.now()
    if (now - entry.readAt >= this.ttlMs) return this.#load(key, load)
    if (now >= entry.refreshAt && !this.#loading.has(key)) {
      // A failed refresh leaves the entry to expire; the next `get` then loads in the foreground and reports it.
      this.#load(key, load, true).catch(() => {})
    }
    return entry.value
  }

  /** How many values are cached, fresh or not yet swept. */
  get size(): number {
    return this.#entries.size
  }

  #load(key: string, load: Loader<V> | undefined, inBackground = false): Promise<V | undefined> {
    const pending = this.#loading.get(key)
    if (pending) {
      // An expired entry whose refresh is still gathering: someone waits for it now.
      if (!inBackground && this.#queued.has(key)) this.#planFlush(false)
      return pending
    }
    const generation = this.#generation
    const readAt = this.clock.now()
    this.#sweepExpired(readAt)
    const promise: Promise<V | undefined> = (load ? load() : this.#enqueue(key, inBackground))
      .then((value) => {
        // `delete(key)` drops the load from #loading: one that raced an invalidation of its key is not stored.
        const current = this.#loading.get(key) === promise && generation === this.#generation
        if (value === undefined) this.#entries.delete(key)
        else if (current) this.#entries.set(detached(key), { value, readAt, refreshAt: readAt + this.ttlMs * (REFRESH_AHEAD_SHARE + REFRESH_SPREAD_SHARE * this.#random()) })
        return value
      })
      .finally(() => {
        if (this.#loading.get(key) === promise) this.#loading.delete(key)
      })
    this.#loading.set(key, promise)
    return promise
  }

  /** The key's place in the next batch; a key queued already (its load since invalidated) shares that place. */
  #enqueue(key: string, inBackground: boolean): Promise<V | undefined> {
    if (!this.#batch) return Promise.reject(new Error('TtlCache#get needs a loader: this cache has no batch loader'))
    let waiter = this.#queued.get(key)
    if (!waiter) {
      let settle: Pick<Waiter<V>, 'resolve' | 'reject'> | undefined
      const promise = new Promise<V | undefined>((resolve, reject) => (settle = { resolve, reject }))
      if (!settle) throw new Error('a Promise executor runs at once')
      waiter = { promise, ...settle }
      this.#queued.set(key, waiter)
    }
    this.#planFlush(inBackground && this.#queued.size < BATCH_SIZE)
    return waiter.promise
  }

  /** A load someone waits for takes every queued refresh with it; refreshes alone gather for REFRESH_GATHER_MS. */
  #planFlush(mayGather: boolean): void {
    if (this.#flushAfterTurn) return
    if (mayGather) {
      this.#gathering ??= setTimeout(() => this.#flush(), REFRESH_GATHER_MS).unref()
      return
    }
    clearTimeout(this.#gathering)
    this.#gathering = undefined
    this.#flushAfterTurn = true
    setImmediate(() => this.#flush())
  }

  /** One query per BATCH_SIZE keys, for every key queued since the last flush. */
  #flush(): void {
    clearTimeout(this.#gathering)
    this.#gathering = undefined
    this.#flushAfterTurn = false
    const batch = this.#batch
    const queued = [...this.#queued]
    this.#queued = new Map()
    if (!batch) return
    for (let start = 0; start < queued.length; start += BATCH_SIZE) {
      const waiting = queued.slice(start, start + BATCH_SIZE)
      batch(
        waiting.map(([key]) => key),
        (key) => this.#entries.peek(key)?.value,
      ).then(
        (found) =>
          waiting.forEach(([key, waiter]) => {
            const value = found.get(key)
            if (value instanceof Error) waiter.reject(value)
            else waiter.resolve(value)
          }),
        (error: unknown) => waiting.forEach(([, waiter]) => waiter.reject(error)),
      )
    }
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
    this.#entries.delete(key)
    this.#loading.delete(key)
  }

  clear(): void {
    this.#generation++
    this.#entries.clear()
    this.#loading.clear()
  }
}

/**
 * A copy of `key` that holds on to no other string. V8 makes a substring (a route parameter) a view into the string
 * it was cut from, so a cache that kept the substring as its key would keep the whole request URL with it.
 */
function detached(key: string): string {
  return Buffer.from(key, 'utf8').toString('utf8')
}
