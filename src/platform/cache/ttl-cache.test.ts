import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { BATCH_SIZE, REFRESH_GATHER_MS, TtlCache } from './ttl-cache.js'

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
    clock.advance(3999)
    expect(await cache.get('k', load)).toBe('v1')
    clock.advance(1001)
    expect(await cache.get('k', load)).toBe('v2')
    expect(loads).toBe(2)
  })

  it('answers a fresh value at once, without a promise', async () => {
    const cache = new TtlCache<string>(5000, manualClock())
    const load = async () => 'v'
    expect(cache.get('k', load)).toBeInstanceOf(Promise)
    await cache.get('k', load)
    expect(cache.get('k', load)).toBe('v')
  })

  it('reloads a value in use in the background before it expires, serving it meanwhile', async () => {
    const clock = manualClock()
    const cache = new TtlCache<string>(5000, clock)
    let loads = 0
    let release: () => void = () => {}
    const load = () =>
      new Promise<string>((resolve) => {
        const value = `v${++loads}`
        release = () => resolve(value)
      })
    const first = cache.get('k', load)
    release()
    expect(await first).toBe('v1')
    clock.advance(4000)
    expect(cache.get('k', load)).toBe('v1')
    expect(loads).toBe(2)
    expect(cache.get('k', load)).toBe('v1')
    expect(loads).toBe(2)
    release()
    await Promise.resolve()
    await Promise.resolve()
    expect(cache.get('k', load)).toBe('v2')
    // The reload began at 4000: its value is served until 9000 (starting the next reload), and no longer.
    clock.advance(4999)
    expect(cache.get('k', load)).toBe('v2')
    clock.advance(1)
    const expired = cache.get('k', load)
    expect(expired).toBeInstanceOf(Promise)
    release()
    expect(await expired).toBe('v3')
    expect(loads).toBe(3)
  })

  it('counts the lifetime from when the read began, not when it answered', async () => {
    const clock = manualClock()
    const cache = new TtlCache<string>(5000, clock)
    let release: (value: string) => void = () => {}
    const slow = cache.get('k', () => new Promise<string>((resolve) => (release = resolve)))
    clock.advance(2000)
    release('old')
    expect(await slow).toBe('old')
    clock.advance(3000)
    expect(await cache.get('k', async () => 'new')).toBe('new')
  })

  it('keeps serving a value whose background reload failed until it expires, then reports the failure', async () => {
    const clock = manualClock()
    const cache = new TtlCache<string>(5000, clock)
    expect(await cache.get('k', async () => 'v1')).toBe('v1')
    const failing = async (): Promise<string> => {
      throw new Error('database down')
    }
    clock.advance(4000)
    expect(cache.get('k', failing)).toBe('v1')
    await new Promise((resolve) => setImmediate(resolve))
    clock.advance(999)
    expect(cache.get('k', failing)).toBe('v1')
    clock.advance(1)
    await expect(cache.get('k', failing)).rejects.toThrow('database down')
  })

  it('drops a value whose background reload finds the row gone', async () => {
    const clock = manualClock()
    const cache = new TtlCache<string>(5000, clock)
    expect(await cache.get('k', async () => 'v1')).toBe('v1')
    clock.advance(4000)
    expect(cache.get('k', async () => undefined)).toBe('v1')
    await new Promise((resolve) => setImmediate(resolve))
    expect(await cache.get('k', async () => undefined)).toBeUndefined()
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

  it('keeps at most its bound of entries, forgetting the least recently used first', async () => {
    const cache = new TtlCache<string>(5000, manualClock(), { maxEntries: 2 })
    await cache.get('a', async () => 'a1')
    await cache.get('b', async () => 'b1')
    expect(cache.get('a', async () => 'a2')).toBe('a1')
    await cache.get('c', async () => 'c1')
    expect(cache.size).toBe(2)
    expect(cache.get('a', async () => 'a2')).toBe('a1')
    expect(await cache.get('b', async () => 'b2')).toBe('b2')
  })

  it('sweeps out expired entries nobody asks for again, at the next load', async () => {
    const clock = manualClock()
    const cache = new TtlCache<string>(5000, clock)
    for (const key of ['a', 'b', 'c']) await cache.get(key, async () => key)
    expect(cache.size).toBe(3)
    clock.advance(5000)
    await cache.get('d', async () => 'd')
    expect(cache.size).toBe(1)
  })

  it('loads the keys one turn asks for in one batch, and never caches what the batch did not find', async () => {
    const batches: string[][] = []
    const cache = new TtlCache<string>(5000, manualClock(), {
      batch: async (keys) => {
        batches.push([...keys])
        return new Map(keys.filter((key) => key !== 'gone').map((key) => [key, `v-${key}`]))
      },
    })
    const answers = await Promise.all([cache.get('a'), cache.get('b'), cache.get('a'), cache.get('gone')])
    expect(answers).toEqual(['v-a', 'v-b', 'v-a', undefined])
    expect(batches).toEqual([['a', 'b', 'gone']])
    expect(cache.get('a')).toBe('v-a')
    expect(await cache.get('gone')).toBeUndefined()
    expect(batches).toEqual([['a', 'b', 'gone'], ['gone']])
  })

  describe('background refreshes', () => {
    // Only the gathering timer is faked: the turn-by-turn flush (setImmediate) stays real.
    beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }))
    afterEach(() => vi.useRealTimers())
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

    it('refreshes the values asked for after half their lifetime, gathered into one batch', async () => {
      const clock = manualClock()
      let round = 0
      const batches: string[][] = []
      const cache = new TtlCache<string>(5000, clock, {
        batch: async (keys) => {
          batches.push([...keys])
          return new Map(keys.map((key) => [key, `${key}${round}`]))
        },
        // Every refresh point at the start of its spread: exactly half the lifetime.
        random: () => 0,
      })
      await Promise.all([cache.get('a'), cache.get('b')])
      clock.advance(2499)
      expect([cache.get('a'), cache.get('b')]).toEqual(['a0', 'b0'])
      expect(batches).toHaveLength(1)
      round = 1
      clock.advance(1)
      expect(cache.get('a')).toBe('a0')
      await nextTurn()
      // A later turn's refresh joins the first one's batch.
      expect(cache.get('b')).toBe('b0')
      vi.advanceTimersByTime(REFRESH_GATHER_MS - 1)
      await nextTurn()
      expect(batches).toHaveLength(1)
      vi.advanceTimersByTime(1)
      await nextTurn()
      expect(batches).toEqual([['a', 'b'], ['a', 'b']])
      expect([cache.get('a'), cache.get('b')]).toEqual(['a1', 'b1'])
    })

    it('reads the gathered refreshes with the next load someone waits for', async () => {
      const clock = manualClock()
      const batches: string[][] = []
      const cache = new TtlCache<string>(5000, clock, {
        batch: async (keys) => {
          batches.push([...keys])
          return new Map(keys.map((key) => [key, key]))
        },
        random: () => 0,
      })
      await cache.get('a')
      clock.advance(2500)
      expect(cache.get('a')).toBe('a')
      await nextTurn()
      expect(batches).toEqual([['a']])
      expect(await cache.get('c')).toBe('c')
      expect(batches).toEqual([['a'], ['a', 'c']])
      // The gathering timer was cleared with the batch: nothing more is read when it would have fired.
      vi.advanceTimersByTime(REFRESH_GATHER_MS)
      await nextTurn()
      expect(batches).toEqual([['a'], ['a', 'c']])
    })

    it('reads a full batch of due refreshes after the turn, without waiting for more', async () => {
      const clock = manualClock()
      const batches: string[][] = []
      const cache = new TtlCache<string>(5000, clock, {
        batch: async (keys) => {
          batches.push([...keys])
          return new Map(keys.map((key) => [key, key]))
        },
        random: () => 0,
      })
      const keys = Array.from({ length: BATCH_SIZE }, (_, index) => `k${index}`)
      await Promise.all(keys.map((key) => cache.get(key)))
      clock.advance(2500)
      keys.slice(0, -1).forEach((key) => cache.get(key))
      await nextTurn()
      expect(batches).toHaveLength(1)
      cache.get(keys.at(-1)!)
      await nextTurn()
      expect(batches).toEqual([keys, keys])
    })

    it('spreads the refresh points of entries loaded together over a quarter of their lifetime', async () => {
      const clock = manualClock()
      const draws = [0, 0.999]
      const batches: string[][] = []
      const cache = new TtlCache<string>(5000, clock, {
        batch: async (keys) => {
          batches.push([...keys])
          return new Map(keys.map((key) => [key, key]))
        },
        random: () => draws.shift() ?? 0,
      })
      const refresh = async (key: string) => {
        cache.get(key)
        vi.advanceTimersByTime(REFRESH_GATHER_MS)
        await nextTurn()
      }
      await Promise.all([cache.get('a'), cache.get('b')])
      clock.advance(2500)
      await refresh('a')
      await refresh('b')
      expect(batches).toEqual([['a', 'b'], ['a']])
      // b's refresh point: 2500 + 0.999 × 1250 = 3748.75 ms after its read.
      clock.advance(1248)
      await refresh('b')
      expect(batches).toEqual([['a', 'b'], ['a']])
      clock.advance(1)
      await refresh('b')
      expect(batches).toEqual([['a', 'b'], ['a'], ['b']])
    })

    it('shows a batch loader the value it holds, so that an unchanged row can keep it', async () => {
      const clock = manualClock()
      let version = 1
      const cache = new TtlCache<{ version: number }>(5000, clock, {
        batch: async (keys, cached) => new Map(keys.map((key) => [key, cached(key)?.version === version ? cached(key)! : { version }])),
        random: () => 0,
      })
      const first = await cache.get('k')
      clock.advance(2500)
      expect(cache.get('k')).toBe(first)
      vi.advanceTimersByTime(REFRESH_GATHER_MS)
      await nextTurn()
      clock.advance(2500)
      // Refreshed unchanged, and now due again: that refresh gathers.
      expect(cache.get('k')).toBe(first)
      version = 2
      clock.advance(2500)
      // Expired: the gathering refresh is read after this turn, not when the timer fires.
      const reloaded = cache.get('k')
      await nextTurn()
      expect(await reloaded).toEqual({ version: 2 })
      expect(cache.get('k')).toEqual({ version: 2 })
    })
  })

  it('fails the load of a key the batch answered with an error, and only that one', async () => {
    const cache = new TtlCache<string>(5000, manualClock(), {
      batch: async (keys) => new Map(keys.map((key) => [key, key === 'bad' ? new Error('unreadable') : key])),
    })
    const [good, bad] = await Promise.allSettled([cache.get('good'), cache.get('bad')])
    expect(good).toEqual({ status: 'fulfilled', value: 'good' })
    expect(bad).toMatchObject({ status: 'rejected', reason: new Error('unreadable') })
  })

  it('reports a failed batch to every key of it', async () => {
    const cache = new TtlCache<string>(5000, manualClock(), {
      batch: async () => {
        throw new Error('database down')
      },
    })
    const results = await Promise.allSettled([cache.get('a'), cache.get('b')])
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected'])
  })

  it('answers every reader of a key invalidated while its batch was queued', async () => {
    const cache = new TtlCache<string>(5000, manualClock(), { batch: async (keys) => new Map(keys.map((key) => [key, 'v'])) })
    const first = cache.get('k')
    cache.delete('k')
    const second = cache.get('k')
    expect(await Promise.all([first, second])).toEqual(['v', 'v'])
  })

  it('stores the loads of other keys when one key is invalidated during a batch', async () => {
    let release: () => void = () => {}
    const cache = new TtlCache<string>(5000, manualClock(), {
      batch: (keys) => new Promise((resolve) => (release = () => resolve(new Map(keys.map((key) => [key, `v-${key}`]))))),
    })
    const loads = Promise.all([cache.get('a'), cache.get('b')])
    await new Promise((resolve) => setImmediate(resolve))
    cache.delete('a')
    release()
    expect(await loads).toEqual(['v-a', 'v-b'])
    expect(cache.get('b')).toBe('v-b')
    expect(cache.get('a')).toBeInstanceOf(Promise)
  })
})
