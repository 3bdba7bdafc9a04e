import type { FastifyBaseLogger } from 'fastify'
import type { DestinationStream } from 'pino'
import { describe, expect, it } from 'vitest'
import { createLogger } from './logger.js'
import { ThrottledWarning, ThrottledWarnings } from './throttled-warning.js'

const MINUTE = 60_000

function capture(): { log: FastifyBaseLogger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = []
  const destination: DestinationStream = { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) }
  return { log: createLogger('info', destination), lines }
}

describe('ThrottledWarnings', () => {
  it('logs a key once per interval, then tells how many it left out', () => {
    const { log, lines } = capture()
    let now = 1_000_000
    const warnings = new ThrottledWarnings('endpoint failing', MINUTE, () => now)
    for (let n = 1; n <= 4; n++) {
      warnings.report(log, 'ep_1', { n })
      now += 1000
    }
    expect(lines).toMatchObject([{ level: 40, msg: 'endpoint failing', n: 1 }])
    expect(lines[0]).not.toHaveProperty('omitted')

    now += MINUTE
    warnings.report(log, 'ep_1', { n: 5 })
    warnings.report(log, 'ep_1', { n: 6 })
    expect(lines).toHaveLength(2)
    expect(lines[1]).toMatchObject({ level: 40, msg: 'endpoint failing', n: 5, omitted: 3 })

    // The count starts again from that line.
    now += MINUTE
    warnings.report(log, 'ep_1', { n: 7 })
    expect(lines[2]).toMatchObject({ n: 7, omitted: 1 })
  })

  it('throttles each key on its own', () => {
    const { log, lines } = capture()
    const now = 1_000_000
    const warnings = new ThrottledWarnings('endpoint failing', MINUTE, () => now)
    warnings.report(log, 'ep_1', { endpoint: 'ep_1' })
    warnings.report(log, 'ep_2', { endpoint: 'ep_2' })
    warnings.report(log, 'ep_1', { endpoint: 'ep_1' })
    expect(lines.map((line) => line.endpoint)).toEqual(['ep_1', 'ep_2'])
  })

  it('keeps the count of a key whose interval passed while other keys were logged', () => {
    const { log, lines } = capture()
    let now = 1_000_000
    const warnings = new ThrottledWarnings('endpoint failing', MINUTE, () => now)
    warnings.report(log, 'ep_1', {})
    warnings.report(log, 'ep_1', {})
    warnings.report(log, 'ep_2', {})
    now += 2 * MINUTE
    // ep_2's line forgets the quiet keys; ep_1 still has one to tell.
    warnings.report(log, 'ep_3', {})
    warnings.report(log, 'ep_2', {})
    warnings.report(log, 'ep_1', {})
    expect(lines.slice(3)).toEqual([expect.not.objectContaining({ omitted: expect.anything() }), expect.objectContaining({ omitted: 1 })])
  })
})

describe('ThrottledWarning', () => {
  it('logs the error once per interval, with the number left out', () => {
    const { log, lines } = capture()
    let now = 1_000_000
    const warning = new ThrottledWarning('the database is unavailable', MINUTE, () => now)
    warning.report(log, new Error('first'))
    warning.report(log, new Error('second'))
    now += MINUTE
    warning.report(log, new Error('third'))
    expect(lines).toMatchObject([
      { level: 40, msg: 'the database is unavailable', err: { message: 'first' } },
      { level: 40, msg: 'the database is unavailable', err: { message: 'third' }, omitted: 1 },
    ])
  })
})
