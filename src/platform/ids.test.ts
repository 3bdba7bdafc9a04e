import { describe, expect, it } from 'vitest'
import { idBoundary, looksLikeId, madeBefore, newId } from './ids.js'

const CROCKFORD_BODY = /^[0-9A-HJKMNP-TV-Z]{26}$/

describe('newId', () => {
  it('is the prefix, an underscore and a 26-character Crockford base32 body', () => {
    for (const prefix of ['acct', 'cli', 'key', 'evt', 'ep', 'sub', 'dlv'] as const) {
      const id = newId(prefix, 1_700_000_000_000)
      const [head, body] = id.split('_')
      expect(head).toBe(prefix)
      expect(body).toMatch(CROCKFORD_BODY)
      expect(looksLikeId(prefix, id)).toBe(true)
    }
  })

  it('never uses I, L, O or U, over many ids', () => {
    const bodies = Array.from({ length: 2000 }, () => newId('evt').slice(4)).join('')
    expect(bodies).not.toMatch(/[ILOU]/)
    expect(bodies).toMatch(/^[0-9A-Z]+$/)
  })

  it('encodes the millisecond time in its first 10 characters', () => {
    expect(newId('evt', 0).slice(4, 14)).toBe('0000000000')
    expect(newId('evt', 1).slice(4, 14)).toBe('0000000001')
    expect(newId('evt', 32).slice(4, 14)).toBe('0000000010')
    // The ULID spec example time: 1469918176385 ms is 01ARYZ6S41.
    expect(newId('evt', 1469918176385).slice(4, 14)).toBe('01ARYZ6S41')
  })

  it('sorts lexicographically in the order the ids were made at increasing milliseconds', () => {
    const start = 1_700_000_000_000
    const times = [start, start + 1, start + 2, start + 31, start + 32, start + 1023, start + 1024, start + 86_400_000, 2 ** 47]
    const ids = times.map((ms) => newId('dlv', ms))
    expect([...ids].reverse().sort()).toEqual(ids)
  })

  it('sorts ids made in the same millisecond in the order they were made', () => {
    const ids = Array.from({ length: 1000 }, () => newId('dlv', 1_700_000_000_000))
    expect([...ids].sort()).toEqual(ids)
    // The next millisecond starts afresh and still sorts after them.
    const later = newId('dlv', 1_700_000_000_001)
    expect(later > ids.at(-1)!).toBe(true)
  })

  it('differs between two ids made in the same millisecond', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newId('acct', 42)))
    expect(ids.size).toBe(1000)
  })
})

describe('looksLikeId', () => {
  it('refuses another prefix, a wrong length and excluded letters', () => {
    const id = newId('acct', 1_700_000_000_000)
    expect(looksLikeId('cli', id)).toBe(false)
    expect(looksLikeId('acct', id.slice(0, -1))).toBe(false)
    expect(looksLikeId('acct', `${id.slice(0, -1)}U`)).toBe(false)
    expect(looksLikeId('acct', id.toLowerCase())).toBe(false)
  })
})

describe('idBoundary', () => {
  it('sorts between the ids made just before and at its instant', () => {
    const at = Date.UTC(2026, 0, 1)
    expect(newId('dlv', at - 1) < idBoundary('dlv', at)).toBe(true)
    expect(idBoundary('dlv', at) <= newId('dlv', at)).toBe(true)
    expect(looksLikeId('dlv', idBoundary('dlv', at))).toBe(true)
  })
})

describe('madeBefore', () => {
  it('orders ids of any prefixes as they were made, within a millisecond and across them', () => {
    const [event, subscription, delivery] = [newId('evt', 1_700_000_000_000), newId('sub', 1_700_000_000_000), newId('dlv', 1_700_000_000_000)]
    expect(madeBefore(event, subscription)).toBe(true)
    expect(madeBefore(subscription, delivery)).toBe(true)
    expect(madeBefore(subscription, event)).toBe(false)
    expect(madeBefore(event, event)).toBe(false)
    expect(madeBefore(newId('sub', 1_700_000_000_002), newId('evt', 1_700_000_000_001))).toBe(false)
  })
})
