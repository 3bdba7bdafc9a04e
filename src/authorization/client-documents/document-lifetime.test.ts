import { describe, expect, it } from 'vitest'
import { DOCUMENT_LIFETIME_BOUNDS_MS, documentLifetimeMs } from './document-lifetime.js'

const NOW = Date.parse('2026-01-01T00:00:00Z')
const { minimum, maximum } = DOCUMENT_LIFETIME_BOUNDS_MS

describe('how long a metadata document is cached', () => {
  it('follows max-age, less the Age of a cached copy', () => {
    expect(documentLifetimeMs({ 'cache-control': 'public, max-age=600' }, NOW)).toBe(600_000)
    expect(documentLifetimeMs({ 'cache-control': 'max-age="600"', age: '100' }, NOW)).toBe(500_000)
  })

  it('follows Expires against Date, or against the fetch when there is no Date', () => {
    const date = new Date(NOW).toUTCString()
    const expires = new Date(NOW + 3600_000).toUTCString()
    expect(documentLifetimeMs({ expires, date }, NOW)).toBe(3600_000)
    expect(documentLifetimeMs({ expires }, NOW)).toBe(3600_000)
  })

  it('keeps within one minute and one day', () => {
    expect(documentLifetimeMs({ 'cache-control': 'max-age=5' }, NOW)).toBe(minimum)
    expect(documentLifetimeMs({ 'cache-control': 'max-age=31536000' }, NOW)).toBe(maximum)
    expect(documentLifetimeMs({ 'cache-control': 'no-store, max-age=600' }, NOW)).toBe(minimum)
    expect(documentLifetimeMs({ 'cache-control': 'no-cache' }, NOW)).toBe(minimum)
    expect(documentLifetimeMs({ expires: 'yesterday' }, NOW)).toBe(minimum)
    expect(documentLifetimeMs({ 'cache-control': 'max-age=-5' }, NOW)).toBe(minimum)
    expect(documentLifetimeMs({}, NOW)).toBe(minimum)
  })
})
