import { describe, expect, it } from 'vitest'
import { DEFAULT_PRUNE_TIMING, nextPruneDelay } from './pruner.js'

describe('pruning schedule', () => {
  it('comes back soon after a full batch and waits the interval otherwise', () => {
    expect(nextPruneDelay(DEFAULT_PRUNE_TIMING.batch, DEFAULT_PRUNE_TIMING)).toBe(DEFAULT_PRUNE_TIMING.catchUpMs)
    expect(nextPruneDelay(DEFAULT_PRUNE_TIMING.batch - 1, DEFAULT_PRUNE_TIMING)).toBe(DEFAULT_PRUNE_TIMING.intervalMs)
    expect(nextPruneDelay(0, DEFAULT_PRUNE_TIMING)).toBe(DEFAULT_PRUNE_TIMING.intervalMs)
    expect(DEFAULT_PRUNE_TIMING.batch).toBeLessThanOrEqual(1000)
  })
})
