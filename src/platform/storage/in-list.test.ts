import { describe, expect, it } from 'vitest'
import { inList } from './in-list.js'

describe('inList', () => {
  it('pads a list with its last value to the next power of two', () => {
    expect(inList([])).toEqual([])
    expect(inList(['a'])).toEqual(['a'])
    expect(inList(['a', 'b', 'c'])).toEqual(['a', 'b', 'c', 'c'])
    expect(inList(['a', 'b', 'c', 'd'])).toEqual(['a', 'b', 'c', 'd'])
    expect(new Set(Array.from({ length: 500 }, (_, n) => inList(Array.from({ length: n + 1 }, String)).length)).size).toBe(10)
  })
})
