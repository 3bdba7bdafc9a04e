import { describe, expect, it } from 'vitest'
import { TurnBatch } from './turn-batch.js'

/** Resolves once the event loop has gone round: after every `setImmediate` queued before it. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

describe('TurnBatch', () => {
  it('runs the steps of one turn together after the caller returns, in the order they came', async () => {
    const batch = new TurnBatch(10)
    const ran: string[] = []
    const results = ['a', 'b', 'c'].map((name) =>
      batch.run(() => {
        ran.push(name)
        return name.toUpperCase()
      }),
    )
    ran.push('caller')
    expect(await Promise.all(results)).toEqual(['A', 'B', 'C'])
    expect(ran).toEqual(['caller', 'a', 'b', 'c'])
  })

  it('rejects only the step that threw', async () => {
    const batch = new TurnBatch(10)
    const failing = batch.run(() => {
      throw new Error('this step failed')
    })
    const passing = batch.run(() => 42)
    await expect(failing).rejects.toThrow('this step failed')
    await expect(passing).resolves.toBe(42)
  })

  it('runs at most maxPerTurn steps in one turn and the rest in the turns after', async () => {
    const batch = new TurnBatch(2)
    const ran: number[] = []
    const results = [1, 2, 3, 4, 5].map((step) =>
      batch.run(() => {
        ran.push(step)
        return step
      }),
    )
    await nextTurn()
    expect(ran).toEqual([1, 2])
    await nextTurn()
    expect(ran).toEqual([1, 2, 3, 4])
    expect(await Promise.all(results)).toEqual([1, 2, 3, 4, 5])
  })

  it('takes steps again after a turn has emptied it, and passes on what an async step resolves or rejects', async () => {
    const batch = new TurnBatch(10)
    expect(await batch.run(() => 'first')).toBe('first')
    expect(await batch.run(async () => 'second')).toBe('second')
    await expect(batch.run(() => Promise.reject(new Error('rejected later')))).rejects.toThrow('rejected later')
  })

  it('runs a step queued by a running step in a later turn', async () => {
    const batch = new TurnBatch(10)
    const ran: string[] = []
    const outer = batch.run(() => {
      ran.push('outer')
      return batch.run(() => ran.push('inner'))
    })
    await nextTurn()
    expect(ran).toEqual(['outer'])
    await outer
    expect(ran).toEqual(['outer', 'inner'])
  })

  it('refuses a cap that would never let a step run', () => {
    for (const cap of [0, -1, 1.5, Number.NaN]) expect(() => new TurnBatch(cap)).toThrow(RangeError)
  })
})
