import { describe, expect, it } from 'vitest'
import { StageMoveRefused } from '../stage-machine.js'
import { FLOW_MOVES } from './flow-stages.js'

/** The sign-in flow's legal moves, written out apart from the table they check. */
const LEGAL = new Set([
  'pushed>login',
  'pushed>done',
  'login>login_answered',
  'login>done',
  'login_answered>consent',
  'login_answered>code',
  'login_answered>done',
  'consent>consent_answered',
  'consent>done',
  'consent_answered>code',
  'consent_answered>done',
  'code>redeemed',
  'code>done',
])

describe('the sign-in flow stages', () => {
  it('are the stages the database allows', () => {
    expect([...FLOW_MOVES.stages].sort()).toEqual(['code', 'consent', 'consent_answered', 'done', 'login', 'login_answered', 'pushed', 'redeemed'])
  })

  for (const from of FLOW_MOVES.stages) {
    for (const to of FLOW_MOVES.stages) {
      const legal = LEGAL.has(`${from}>${to}`)
      it(`${legal ? 'allow' : 'refuse'} ${from} → ${to}`, () => {
        expect(FLOW_MOVES.canMove(from, to)).toBe(legal)
        if (legal) expect(() => FLOW_MOVES.assertMove(from, to)).not.toThrow()
        else {
          expect(() => FLOW_MOVES.assertMove(from, to)).toThrow(StageMoveRefused)
          expect(() => FLOW_MOVES.assertMove(from, to)).toThrow(`A sign-in flow can't move from ${from} to ${to}`)
        }
      })
    }
  }

  it('let every stage but the two ends close (move to done)', () => {
    expect([...FLOW_MOVES.openStages('done')].sort()).toEqual(['code', 'consent', 'consent_answered', 'login', 'login_answered', 'pushed'])
  })
})
