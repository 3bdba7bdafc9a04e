import { describe, expect, it } from 'vitest'
import { JWKS_MAX_AGE_SECONDS, type KeyTimeline, planRotation, publishedKeysAt, signingKeyAt } from './policy.js'

const MAX_AGE_MS = JWKS_MAX_AGE_SECONDS * 1000

function key(kid: string, overrides: Partial<KeyTimeline> = {}): KeyTimeline {
  return { kid, alg: 'ES256', signsFrom: 0, retiresAt: null, publishedUntil: null, revokedAt: null, ...overrides }
}

describe('signingKeyAt', () => {
  it('picks the key of the requested algorithm whose signing period covers now', () => {
    const keys = [key('es', { alg: 'ES256', signsFrom: 100 }), key('rs', { alg: 'RS256', signsFrom: 100 })]
    expect(signingKeyAt(keys, 'ES256', 100)?.kid).toBe('es')
    expect(signingKeyAt(keys, 'RS256', 150)?.kid).toBe('rs')
  })

  it('finds nothing before the first key starts signing, or when only another algorithm has keys', () => {
    expect(signingKeyAt([key('a', { signsFrom: 100 })], 'ES256', 99)).toBeUndefined()
    expect(signingKeyAt([key('a', { alg: 'RS256' })], 'ES256', 1000)).toBeUndefined()
    expect(signingKeyAt([], 'ES256', 1000)).toBeUndefined()
  })

  it('hands over from the old key to the new one exactly at the retire time', () => {
    const keys = [key('old', { signsFrom: 0, retiresAt: 1000, publishedUntil: 5000 }), key('new', { signsFrom: 1000 })]
    expect(signingKeyAt(keys, 'ES256', 999)?.kid).toBe('old')
    expect(signingKeyAt(keys, 'ES256', 1000)?.kid).toBe('new')
    expect(signingKeyAt(keys, 'ES256', 4000)?.kid).toBe('new')
  })

  it('never picks a retired key, even when nothing else can sign', () => {
    expect(signingKeyAt([key('old', { retiresAt: 1000, publishedUntil: 5000 })], 'ES256', 1000)).toBeUndefined()
  })

  it('never picks a revoked key', () => {
    const keys = [key('old', { signsFrom: 0 }), key('new', { signsFrom: 10, revokedAt: 20 })]
    expect(signingKeyAt(keys, 'ES256', 30)?.kid).toBe('old')
    expect(signingKeyAt([key('only', { revokedAt: 5 })], 'ES256', 1)).toBeUndefined()
  })

  it('prefers the newest signing period when several overlap, and breaks ties by kid', () => {
    const keys = [key('b', { signsFrom: 10 }), key('c', { signsFrom: 5 }), key('a', { signsFrom: 10 })]
    expect(signingKeyAt(keys, 'ES256', 20)?.kid).toBe('b')
    expect(signingKeyAt(keys, 'ES256', 7)?.kid).toBe('c')
  })
})

describe('publishedKeysAt', () => {
  it('lists upcoming, signing and retiring keys; drops keys past published_until and revoked keys', () => {
    const keys = [
      key('gone', { signsFrom: 0, retiresAt: 100, publishedUntil: 200 }),
      key('retiring', { signsFrom: 100, retiresAt: 300, publishedUntil: 1000 }),
      key('signing', { signsFrom: 300 }),
      key('upcoming', { signsFrom: 5000 }),
      key('revoked', { signsFrom: 300, revokedAt: 400 }),
    ]
    expect(publishedKeysAt(keys, 500).map((k) => k.kid)).toEqual(['retiring', 'signing', 'upcoming'])
  })

  it('keeps a retired key published until just before published_until and not at it', () => {
    const keys = [key('old', { retiresAt: 100, publishedUntil: 200 })]
    expect(publishedKeysAt(keys, 199).map((k) => k.kid)).toEqual(['old'])
    expect(publishedKeysAt(keys, 200)).toEqual([])
  })

  it('removes a revoked key at once, even one not yet signing', () => {
    expect(publishedKeysAt([key('next', { signsFrom: 1000, revokedAt: 10 })], 11)).toEqual([])
  })
})

describe('planRotation', () => {
  it('publishes the new key now and signs with it after the JWKS max-age', () => {
    const plan = planRotation([key('cur')], 'ES256', 10_000, 3600)
    expect(plan.signsFrom).toBe(10_000 + MAX_AGE_MS)
    expect(plan.retiring).toEqual([{ kid: 'cur', retiresAt: 10_000 + MAX_AGE_MS, publishedUntil: 10_000 + MAX_AGE_MS + 3600 * 1000 }])
  })

  it('retires only active keys of the rotated algorithm', () => {
    const keys = [
      key('es', { alg: 'ES256' }),
      key('rs', { alg: 'RS256' }),
      key('es-revoked', { alg: 'ES256', revokedAt: 5 }),
      key('es-retiring', { alg: 'ES256', retiresAt: 50, publishedUntil: 500 }),
    ]
    expect(planRotation(keys, 'ES256', 100, 60).retiring.map((r) => r.kid)).toEqual(['es'])
    expect(planRotation(keys, 'RS256', 100, 60).retiring.map((r) => r.kid)).toEqual(['rs'])
  })

  it('keeps signing continuous across a full plan: old key until the handover, new key after', () => {
    const now = 1_000_000
    const old = key('old', { signsFrom: 0 })
    const plan = planRotation([old], 'ES256', now, 600)
    const retiring = plan.retiring[0]!
    const after = [{ ...old, retiresAt: retiring.retiresAt, publishedUntil: retiring.publishedUntil }, key('new', { signsFrom: plan.signsFrom })]

    expect(signingKeyAt(after, 'ES256', now)?.kid).toBe('old')
    expect(publishedKeysAt(after, now).map((k) => k.kid)).toEqual(['old', 'new'])
    expect(signingKeyAt(after, 'ES256', plan.signsFrom - 1)?.kid).toBe('old')
    expect(signingKeyAt(after, 'ES256', plan.signsFrom)?.kid).toBe('new')
    // A token the old key signed just before the handover lives 600 s; the old key stays published that long.
    expect(publishedKeysAt(after, plan.signsFrom - 1 + 600 * 1000).map((k) => k.kid)).toEqual(['old', 'new'])
    expect(publishedKeysAt(after, retiring.publishedUntil).map((k) => k.kid)).toEqual(['new'])
  })

  it('also retires an upcoming key from an earlier rotation, so the latest rotation wins', () => {
    const keys = [key('old', { signsFrom: 0, retiresAt: 1000 + MAX_AGE_MS, publishedUntil: 9e12 }), key('mid', { signsFrom: 1000 + MAX_AGE_MS })]
    const plan = planRotation(keys, 'ES256', 2000, 60)
    expect(plan.retiring.map((r) => r.kid)).toEqual(['mid'])
    expect(plan.signsFrom).toBe(2000 + MAX_AGE_MS)
  })

  it('with no key of the algorithm, retires nothing', () => {
    expect(planRotation([key('rs', { alg: 'RS256' })], 'ES256', 0, 60)).toEqual({ signsFrom: MAX_AGE_MS, retiring: [] })
  })
})
