import { describe, expect, it } from 'vitest'
import { MAX_NAMED_STATEMENTS, StatementNames } from './prepared-statements.js'

describe('StatementNames', () => {
  it('names each text once, renames one on request, and names no new text past its bound', () => {
    const names = new StatementNames()
    const first = names.of('select 1 where a = $1')
    expect(names.of('select 1 where a = $1')).toBe(first)
    names.renew('select 1 where a = $1')
    expect(names.of('select 1 where a = $1')).not.toBe(first)
    for (let i = 0; names.of(`select ${i} where a = $1`) !== undefined; i++) expect(i).toBeLessThan(MAX_NAMED_STATEMENTS)
    expect(names.of('select 1 where a = $1')).toBeDefined()
    // Past the bound, a text that must be prepared anew runs unnamed.
    names.renew('select 1 where a = $1')
    expect(names.of('select 1 where a = $1')).toBeUndefined()
  })
})
