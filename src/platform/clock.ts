/** The source of "now" for everything that expires or is scheduled, so tests can move time instead of sleeping. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

export function toRfc3339(epochMs: number): string {
  return new Date(epochMs).toISOString()
}

export function optionalRfc3339(epochMs: number | null): string | null {
  return epochMs === null ? null : toRfc3339(epochMs)
}
