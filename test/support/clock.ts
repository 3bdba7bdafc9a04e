import type { AlarmClock } from '../../src/platform/clock.js'

/** A clock that moves only when a test says so: expiry and schedules are tested without sleeping. */
export class TestClock implements AlarmClock {
  #now: number
  readonly #listeners: Array<() => void> = []
  readonly #alarms = new Set<{ at: number; wake: () => void }>()

  constructor(start: number = Math.floor(Date.now() / 1000) * 1000) {
    this.#now = start
  }

  now(): number {
    return this.#now
  }

  advance(ms: number): void {
    this.#now += ms
    this.#ring()
    for (const listener of this.#listeners) listener()
  }

  /** Wakes when an advance reaches `at`; one already reached wakes at once, though after the caller goes on, as a timer would. */
  setAlarm(at: number, wake: () => void): () => void {
    const alarm = { at, wake }
    this.#alarms.add(alarm)
    if (at <= this.#now) queueMicrotask(() => this.#ring())
    return () => this.#alarms.delete(alarm)
  }

  #ring(): void {
    for (const alarm of [...this.#alarms]) {
      if (alarm.at > this.#now) continue
      this.#alarms.delete(alarm)
      alarm.wake()
    }
  }

  /** Runs after every advance: whatever waits on a timer (the webhook worker) looks at the new time at once. */
  onAdvance(listener: () => void): void {
    this.#listeners.push(listener)
  }

  advanceSeconds(seconds: number): void {
    this.advance(seconds * 1000)
  }
}
