import type { Clock } from '../../src/platform/clock.js'

/** A clock that moves only when a test says so: expiry and schedules are tested without sleeping. */
export class TestClock implements Clock {
  #now: number
  readonly #listeners: Array<() => void> = []

  constructor(start: number = Math.floor(Date.now() / 1000) * 1000) {
    this.#now = start
  }

  now(): number {
    return this.#now
  }

  advance(ms: number): void {
    this.#now += ms
    for (const listener of this.#listeners) listener()
  }

  /** Runs after every advance: whatever waits on a timer (the webhook worker) looks at the new time at once. */
  onAdvance(listener: () => void): void {
    this.#listeners.push(listener)
  }

  advanceSeconds(seconds: number): void {
    this.advance(seconds * 1000)
  }
}
