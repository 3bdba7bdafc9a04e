import { describe, expect, it } from 'vitest'
import { disableReason, healthReport } from './endpoint-health.js'

describe('endpoint health', () => {
  it('counts an endpoint with any success in the batch as recovered, not failing', () => {
    const report = healthReport([
      { endpointId: 'mixed', succeeded: false, responseStatus: 500 },
      { endpointId: 'mixed', succeeded: true, responseStatus: 204 },
      { endpointId: 'down', succeeded: false, responseStatus: null },
      { endpointId: 'gone', succeeded: false, responseStatus: 410 },
    ])
    expect([...report.succeeded]).toEqual(['mixed'])
    expect([...report.failing].sort()).toEqual(['down', 'gone'])
    expect([...report.gone]).toEqual(['gone'])
  })

  it('disables at once on 410 Gone, and after webhook_disable_after seconds of failures without a success', () => {
    const now = 1_000_000
    expect(disableReason(null, true, 3600, now)).toBe('gone')
    expect(disableReason(now - 3_599_999, false, 3600, now)).toBeNull()
    expect(disableReason(now - 3_600_000, false, 3600, now)).toBe('failing')
    expect(disableReason(null, false, 3600, now)).toBeNull()
    // An account without settings never disables for failures.
    expect(disableReason(0, false, undefined, now)).toBeNull()
  })
})
