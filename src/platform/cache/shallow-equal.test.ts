import { describe, expect, it } from 'vitest'
import { shallowEqual } from './shallow-equal.js'

describe('shallowEqual', () => {
  it('compares fields, and arrays element by element', () => {
    expect(shallowEqual({ a: 1, b: 'x', c: null, d: [1, 2] }, { a: 1, b: 'x', c: null, d: [1, 2] })).toBe(true)
    expect(shallowEqual({ a: 1, d: [1, 2] }, { a: 1, d: [1, 3] })).toBe(false)
    expect(shallowEqual({ a: 1, d: [1, 2] }, { a: 1, d: [1, 2, 3] })).toBe(false)
    expect(shallowEqual<{ a: number; b?: number }>({ a: 1 }, { a: 1, b: 2 })).toBe(false)
    expect(shallowEqual({ a: 1 }, { a: 2 })).toBe(false)
    expect(shallowEqual({ o: {} }, { o: {} })).toBe(false)
  })
})
