/**
 * Runs CPU-bound steps together, once the event loop has read every request that was ready, instead of one
 * request at a time between reads. `setImmediate` callbacks run right after the loop's poll phase, so under load
 * a turn reads and parses all waiting requests first, then runs their steps back to back, then writes the answers.
 *
 * Why: an ES256 signature takes about 25 µs in a loop but 37–47 µs when HTTP parsing, socket writes and the
 * framework run between two of them, because OpenSSL's code and P-256 tables no longer stay in the CPU caches
 * (README, Benchmarks: the token endpoint). Grouping the signatures of one turn keeps them there. When a single
 * request is waiting, its step runs one `setImmediate` later, with nothing in between.
 *
 * A step runs in the async context of whichever request first scheduled its turn, not its own: anything that
 * tracks a request through AsyncLocalStorage has to be read before the step is queued.
 */
export class TurnBatch {
  readonly #pending: Array<() => void> = []
  #scheduled = false

  /**
   * @param maxPerTurn steps run in one turn at most; later ones wait for the next, so a burst of requests can't
   * hold the event loop (and every answer of the batch, which is written after the batch) for long.
   */
  constructor(private readonly maxPerTurn: number) {
    if (!Number.isInteger(maxPerTurn) || maxPerTurn < 1) throw new RangeError(`maxPerTurn must be a whole number of at least 1, not ${maxPerTurn}`)
  }

  /** The result of `step`, run with the other steps of this turn; a throw rejects this step's promise alone. */
  run<T>(step: () => T | Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#pending.push(() => {
        try {
          resolve(step())
        } catch (error) {
          reject(error)
        }
      })
      this.#schedule()
    })
  }

  #schedule(): void {
    if (this.#scheduled) return
    this.#scheduled = true
    setImmediate(this.#flush)
  }

  readonly #flush = (): void => {
    this.#scheduled = false
    const batch = this.#pending.splice(0, this.maxPerTurn)
    if (this.#pending.length > 0) this.#schedule()
    for (const step of batch) step()
  }
}
