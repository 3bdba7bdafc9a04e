/** One counting window per key: registrations from one address to one account. */
interface Window {
  start: number
  count: number
}

const HOUR_MS = 3600 * 1000

/**
 * Open registration's limit per source address: at most `limit` attempts an hour, counted from an address's first
 * attempt. The counts live in this process, so each Herald process allows the limit (the docs say so); they are
 * bounded: past `maxKeys` addresses the oldest window is forgotten, which can only let an attempt through early.
 */
export class RegistrationRateLimit {
  readonly #windows = new Map<string, Window>()

  constructor(private readonly maxKeys = 10_000) {}

  /** Counts an attempt; answers the seconds until the next is allowed when this one is over the limit, else undefined. */
  take(key: string, limit: number, now: number): number | undefined {
    let window = this.#windows.get(key)
    if (window === undefined || now - window.start >= HOUR_MS) {
      window = { start: now, count: 0 }
      this.#windows.delete(key)
      this.#windows.set(key, window)
      this.#evictBeyondBound()
    }
    if (window.count >= limit) return Math.max(1, Math.ceil((window.start + HOUR_MS - now) / 1000))
    window.count += 1
    return undefined
  }

  #evictBeyondBound(): void {
    // A Map iterates in insertion order, and a renewed window is inserted anew: the first key is the oldest window.
    while (this.#windows.size > this.maxKeys) {
      const oldest = this.#windows.keys().next().value
      if (oldest === undefined) return
      this.#windows.delete(oldest)
    }
  }
}
