import { describe, expect, it } from 'vitest'
import { newUserCode, normalizedUserCode, userCodeDigest } from './user-codes.js'

describe('user codes (RFC 8628 §6.1)', () => {
  it('are eight of the twenty consonants, shown in two halves', () => {
    for (let i = 0; i < 200; i++) expect(newUserCode()).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/)
  })

  it('compare without regard to case, dashes or spaces', () => {
    expect(normalizedUserCode('bcdf-ghjk')).toBe('BCDFGHJK')
    expect(normalizedUserCode(' BCDF GHJK ')).toBe('BCDFGHJK')
    expect(userCodeDigest('bcdfghjk')).toBe(userCodeDigest('BCDF-GHJK'))
  })

  it('refuse what cannot be a code', () => {
    for (const typed of ['', 'BCDF-GHJ', 'BCDF-GHJKL', 'ABCD-EFGH', 'BCDF-GHJ1', 'BCDF_GHJK']) expect(normalizedUserCode(typed)).toBeUndefined()
  })
})
