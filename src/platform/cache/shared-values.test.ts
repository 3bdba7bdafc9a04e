import { describe, expect, it } from 'vitest'
import { SharedValues, parseShared, sharedList } from './shared-values.js'

describe('SharedValues', () => {
  it('answers the kept value for a key it has, and makes, freezes and keeps one for a key it lacks, up to its bound', () => {
    const values = new SharedValues<{ n: number }>(2)
    let made = 0
    const make = (n: number) => () => ({ n: (made++, n) })
    const one = values.of('1', make(1))
    expect(values.of('1', make(1))).toBe(one)
    expect(Object.isFrozen(one)).toBe(true)
    expect(made).toBe(1)
    values.of('2', make(2))
    values.of('3', make(3))
    // The least recently met went; a value still held elsewhere is simply no longer shared.
    expect(values.of('1', make(1))).not.toBe(one)
    expect(made).toBe(4)
  })

  it('shares lists of the same strings in the same order, and every list of strings in a parsed document', () => {
    expect(sharedList(['a', 'b'])).toBe(sharedList(['a', 'b']))
    expect(sharedList(['b', 'a'])).not.toBe(sharedList(['a', 'b']))
    expect(Object.isFrozen(sharedList([]))).toBe(true)

    const text = '{"scopes":["read","write"],"uris":[],"mixed":[1,"x"],"name":"n"}'
    const first = parseShared(text) as Record<string, unknown>
    const second = parseShared(text) as Record<string, unknown>
    expect(second).not.toBe(first)
    expect(second.scopes).toBe(first.scopes)
    expect(second.uris).toBe(sharedList([]))
    expect(second.mixed).not.toBe(first.mixed)
    expect(second).toEqual(first)
  })
})
