import { describe, expect, it } from 'vitest'
import { parseRfc3339 } from './clock.js'

describe('parseRfc3339', () => {
  it('reads each spelling RFC 3339 allows', () => {
    expect(parseRfc3339('2024-06-15T10:20:30Z')).toBe(Date.UTC(2024, 5, 15, 10, 20, 30))
    expect(parseRfc3339('2024-06-15t10:20:30z')).toBe(Date.UTC(2024, 5, 15, 10, 20, 30))
    expect(parseRfc3339('2024-06-15 10:20:30-00:00')).toBe(Date.UTC(2024, 5, 15, 10, 20, 30))
    expect(parseRfc3339('2024-06-15T10:20:30.5-05:30')).toBe(Date.UTC(2024, 5, 15, 15, 50, 30, 500))
    expect(parseRfc3339('2024-02-29T12:00:00.123456789Z')).toBe(Date.UTC(2024, 1, 29, 12, 0, 0, 123))
    expect(parseRfc3339('0099-01-01T00:00:00Z')).toBe(Date.parse('0099-01-01T00:00:00Z'))
  })

  it('reads a leap second as the start of the next minute', () => {
    expect(parseRfc3339('2016-12-31T23:59:60Z')).toBe(Date.UTC(2017, 0, 1))
    expect(parseRfc3339('2017-01-01T00:59:60+01:00')).toBe(Date.UTC(2017, 0, 1))
  })

  it('refuses what is not an RFC 3339 date-time, or is one outside the years 0000–9999 in UTC', () => {
    for (const text of [
      '2023-02-29T00:00:00Z',
      '2024-13-01T00:00:00Z',
      '2024-01-01T24:00:00Z',
      '2024-01-01T00:00:61Z',
      '2024-01-01T00:00:00+0100',
      '2024-01-01T00:00:00+24:00',
      '2024-01-01  00:00:00Z',
      '2024-01-01T00:00:00.Z',
      '2024-01-01T00:00:00',
      '2024-01-01',
      '9999-12-31T23:59:59-23:59',
      '0000-01-01T00:00:00+00:01',
      '',
    ]) {
      expect(parseRfc3339(text), text).toBeUndefined()
    }
  })
})
