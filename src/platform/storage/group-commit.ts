import type { Kysely } from 'kysely'
import type { DB } from './schema.js'
import { type Tx, transaction } from './transaction.js'

/** What a batch's work answers for one of its items: a value, or an error for that item alone. */
export type ItemOutcome<R> = { value: R } | { error: Error }

export interface GroupCommitOptions {
  /** Batches whose transactions may run at once; further items wait and go together in the next batch. */
  concurrency: number
  /** Items per batch at most. */
  maxBatch: number
}

/**
 * Writes of one kind from concurrent requests, committed together. An item submitted while fewer than
 * `concurrency` batches are running starts a batch of its own at once, so a lone request waits for nothing;
 * under load, items queue while the running transactions commit and the next batch takes them all. One
 * transaction and one commit then serve many requests, which is what bounds a single-row write's rate.
 *
 * `work` gets the batch in submission order and answers one outcome per item, in the same order. If a batch's
 * transaction fails, nothing of it is written and each of its items is tried again in a transaction of its own,
 * so one item that can't be written fails alone rather than taking its neighbours with it.
 */
export class GroupCommit<I, R> {
  readonly #waiting: Array<Waiting<I, R>> = []
  #running = 0

  constructor(
    private readonly db: Kysely<DB>,
    private readonly work: (tx: Tx, items: readonly I[]) => Promise<Array<ItemOutcome<R>>>,
    private readonly options: GroupCommitOptions,
  ) {}

  submit(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject })
      if (this.#running < this.options.concurrency) void this.#runBatch()
    })
  }

  async #runBatch(): Promise<void> {
    this.#running++
    try {
      while (this.#waiting.length > 0) {
        const batch = this.#waiting.splice(0, this.options.maxBatch)
        try {
          await this.#commit(batch)
        } catch (error) {
          if (batch.length === 1) batch[0]!.reject(error as Error)
          else for (const entry of batch) await this.#commit([entry]).catch(entry.reject)
        }
      }
    } finally {
      this.#running--
    }
  }

  async #commit(batch: ReadonlyArray<Waiting<I, R>>): Promise<void> {
    const outcomes = await transaction(this.db, (tx) => this.work(tx, batch.map((entry) => entry.item)))
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
