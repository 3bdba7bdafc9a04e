/**
 * A small deterministic PRNG (mulberry32) for generated tests: the same seed gives the same cases, so a failure
 * found once can be replayed by running with its seed.
 */
export class SeededRandom {
  #state: number

  constructor(readonly seed: number) {
    this.#state = seed >>> 0
  }

  /** A float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0
    let t = this.#state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  int(below: number): number {
    return Math.floor(this.next() * below)
  }

  chance(probability: number): boolean {
    return this.next() < probability
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list')
    return items[this.int(items.length)]!
  }
}

/** The seed a generated test runs with: `HERALD_TEST_SEED` to replay a failure, else `fallback`. */
export function testSeed(fallback: number): number {
  const given = process.env.HERALD_TEST_SEED
  return given === undefined || given === '' ? fallback : Number.parseInt(given, 10)
}
