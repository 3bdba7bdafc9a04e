import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { ThrottledWarning } from '../../platform/throttled-warning.js'
import type { AttemptOutcome } from './attempt.js'
import type { CompletionReport } from './completions.js'
import { OutcomeWriter } from './outcome-writer.js'

/**
 * The writer's one invariant that the integration tests can't time: however many outcomes arrive while a write is
 * under way, the writes go one at a time, and `settled` waits for the last. The queue's `complete` is held open here
 * by hand (what it writes is the delivery tests' business).
 */
describe('OutcomeWriter', () => {
  it('writes one batch at a time, whatever arrives during a write, and is settled only once everything is written', async () => {
    const writes: Array<{ size: number; finish: () => void }> = []
    let open = 0
    let mostOpen = 0
    const queue = {
      complete: (batch: readonly AttemptOutcome[]) => {
        open++
        mostOpen = Math.max(mostOpen, open)
        return new Promise<CompletionReport>((resolve) => {
          writes.push({ size: batch.length, finish: () => (open--, resolve({ finished: batch.map(() => ({ status: 'succeeded' })), failed: [], disabled: [], nextRetryAt: null })) })
        })
      },
    }
    const host = { attemptsInFlight: () => 0, stopped: () => false, writing: () => {}, written: () => {} }
    const log = pino({ level: 'silent' })
    const writer = new OutcomeWriter(queue, { finished: () => {} }, log, new ThrottledWarning('unused'), { record: () => {} }, { baseMs: 100, maxMs: 1500 }, 10, host)

    writer.ended(outcome(0))
    expect(writes.map((write) => write.size)).toEqual([1])
    // 1,500 more while the first write is open: each asks for a write of its own.
    for (let n = 1; n <= 1500; n++) writer.ended(outcome(n))
    let settled = false
    const settling = writer.settled().then(() => (settled = true))

    for (let written = 0; written < 3; written++) {
      await until(() => writes.length === written + 1)
      expect(open).toBe(1)
      writes[written]!.finish()
    }
    await settling
    expect(settled).toBe(true)
    expect(writes.map((write) => write.size)).toEqual([1, 1000, 500])
    expect(mostOpen).toBe(1)
  })
})

function outcome(n: number): AttemptOutcome {
  const delivery = { id: `dlv_${n}`, accountId: 'acc', endpointId: 'ep', eventId: 'evt', eventType: 'a.b', eventData: '{}', eventCreatedAt: 0, attemptNumber: 1, leaseToken: 't' }
  return { delivery, request: { url: 'https://receiver.example/', signature: 'v1,c2ln' }, startedAt: 0, durationMs: 1, responseStatus: 204, error: null, responseExcerpt: null, retryAfterSeconds: null }
}

/** Lets pending promise callbacks run until `condition` holds; no timers involved. */
async function until(condition: () => boolean): Promise<void> {
  for (let turns = 0; !condition(); turns++) {
    if (turns > 1000) throw new Error('condition never held')
    await Promise.resolve()
  }
}
