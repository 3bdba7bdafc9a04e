import type { Clock } from '../clock.js'

interface Entry<V> {
  value: V
  expiresAt: number
}

/**
 * A read-through cache with a time-to-live backstop. A value is cached only when the loader finds one: a miss is
 * never cached, so a row created elsewhere is seen at once. Concurrent loads of one key share a single query, and
 * a load that raced an invalidation is not stored, so an invalidation can't be undone by a slow read.
 */
export class TtlCache<V> {
  readonly #entries = new Map<string, Entry<V>>()
  readonly #loading = new Map<string, Promise<V | undefined>>()
  /** Bumped by every invalidation; a load stores its result only if the generation is unchanged. */
  #generation = 0

  constructor(
    private readonly ttlMs: number,
    private readonly clock: Clock,
  ) {}

  get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const entry = this.#entries.get(key)
    if (entry && entry.expiresAt > this.clock.now()) return Promise.resolve(entry.value)
    return this.#load(key, load)
  }

  #load(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const pending = this.#loading.get(key)
    if (pending) return pending
    const generation = this.#generation
    const promise = load()
      .then((value) => {
        if (value === undefined) this.#entries.delete(key)
        else if (generation === this.#generation) this.#entries.set(key, { value, expiresAt: this.clock.now() + this.ttlMs })
        return value
      })
      .finally(() => this.#loading.delete(key))
    this.#loading.set(key, promise)
    return promise
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
