import { isDatabaseUnavailable } from './unavailable.js'

/** What a batch's work answers for one of its items: a value, or an error for that item alone. */
export type ItemOutcome<R> = { value: R } | { error: Error }

export interface BatcherOptions {
  /** Batches that may be running at once; further items wait and go together in the next batch. */
  concurrency: number
  /** Items per batch at most. */
  maxBatch: number
}

/**
 * Database work of one kind from concurrent requests, done together: one statement or transaction serves many
 * requests, and its fixed cost (round trips on PostgreSQL, pages written to the WAL on SQLite) is what bounds
 * single-row work. For writes this is group commit; reads that every request makes (a revocation check) batch the
 * same way. A batch starts once the event loop has taken in what arrived with the first item (setImmediate: every
 * request parsed in the same turn joins, and a lone request waits for nothing else); under load, items queue
 * while the running batches finish and the next batch takes them all.
 *
 * `run` does a batch atomically (in a transaction, or as one statement) and answers one outcome per item, in
 * submission order. It must throw only when nothing of the batch was written: each item is then tried again in a
 * batch of its own, so one item that can't be written fails alone rather than taking its neighbours with it (unless
 * the database is unavailable, which every item would meet).
 */
export class Batcher<I, R> {
  readonly #waiting: Array<Waiting<I, R>> = []
  #running = 0
  #startScheduled = false

  constructor(
    private readonly run: (items: readonly I[]) => Promise<Array<ItemOutcome<R>>>,
    private readonly options: BatcherOptions,
  ) {}

  submit(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject })
      this.#startSoon()
    })
  }

  #startSoon(): void {
    if (this.#startScheduled || this.#running >= this.options.concurrency) return
    this.#startScheduled = true
    setImmediate(() => {
      this.#startScheduled = false
      void this.#runBatches()
    })
  }

  async #runBatches(): Promise<void> {
    this.#running++
    try {
      while (this.#waiting.length > 0) {
        const batch = this.#waiting.splice(0, this.options.maxBatch)
        // More than a batch waits: the rest can go in a batch of its own beside this one.
        if (this.#waiting.length > 0) this.#startSoon()
        try {
          await this.#settle(batch)
        } catch (error) {
          // An unavailable database fails every item alike: trying each alone would only multiply the wait (a
          // connection timeout apiece when the server doesn't answer).
          if (batch.length === 1 || isDatabaseUnavailable(error)) for (const entry of batch) entry.reject(error as Error)
          else for (const entry of batch) await this.#settle([entry]).catch(entry.reject)
        }
      }
    } finally {
      this.#running--
    }
  }

  async #settle(batch: ReadonlyArray<Waiting<I, R>>): Promise<void> {
    const outcomes = await this.run(batch.map((entry) => entry.item))
    batch.forEach((entry, index) => {
      const outcome = outcomes[index]!
      if ('error' in outcome) entry.reject(outcome.error)
      else entry.resolve(outcome.value)
    })
  }
}

interface Waiting<I, R> {
  item: I
  resolve: (value: R) => void
  reject: (error: Error) => void
}
