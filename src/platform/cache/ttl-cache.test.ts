import { describe, expect, it } from 'vitest'
import { TtlCache } from './ttl-cache.js'

function manualClock(start = 1_000_000) {
  let now = start
  return { now: () => now, advance: (ms: number) => (now += ms) }
}

describe('TtlCache', () => {
  it('serves a loaded value until its time-to-live has passed, then loads again', async () => {
    const clock = manualClock()
    const cache = new TtlCache<string>(5000, clock)
    let loads = 0
    const load = async () => `v${++loads}`
    expect(await cache.get('k', load)).toBe('v1')
    clock.advance(4999)
    expect(await cache.get('k', load)).toBe('v1')
    clock.advance(1)
    expect(await cache.get('k', load)).toBe('v2')
  })

  it('never caches a miss', async () => {
    const cache = new TtlCache<string>(5000, manualClock())
    let value: string | undefined = undefined
    expect(await cache.get('k', async () => value)).toBeUndefined()
    value = 'now there'
    expect(await cache.get('k', async () => value)).toBe('now there')
  })

  it('shares one load between concurrent readers of a key', async () => {
    const cache = new TtlCache<number>(5000, manualClock())
    let loads = 0
    let release: (value: number) => void = () => {}
    const load = () => {
      loads++
      return new Promise<number>((resolve) => (release = resolve))
    }
    const readers = [cache.get('k', load), cache.get('k', load), cache.get('k', load)]
    release(42)
    expect(await Promise.all(readers)).toEqual([42, 42, 42])
    expect(loads).toBe(1)
  })

  it('does not store a load that raced an invalidation', async () => {
    const cache = new TtlCache<string>(5000, manualClock())
    let release: (value: string) => void = () => {}
    const slow = cache.get('k', () => new Promise<string>((resolve) => (release = resolve)))
    cache.delete('k')
    release('stale')
    expect(await slow).toBe('stale')
    expect(await cache.get('k', async () => 'fresh')).toBe('fresh')
  })

  it('forgets everything on clear', async () => {
    const cache = new TtlCache<string>(5000, manualClock())
    await cache.get('a', async () => 'old')
    cache.clear()
    expect(await cache.get('a', async () => 'new')).toBe('new')
  })
})
