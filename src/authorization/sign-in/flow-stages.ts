import type { FlowStage } from '../../platform/storage/schema.js'
import { StageMachine } from '../stage-machine.js'

/**
 * The sign-in flow's states and legal moves. A flow starts `pushed` (PAR) or at `login`; each challenge is answered
 * once (`*_answered`) and each verifier spent once; `code` is redeemed once and the redeemed flow is the grant.
 * `done` ends a flow that will issue nothing: a rejection, a refusal, or a flow closed because its session ended or
 * its consent was revoked (then `revoked_at` says when).
 */
export const FLOW_MOVES = new StageMachine<FlowStage>('sign-in flow', {
  pushed: ['login', 'done'],
  login: ['login_answered', 'done'],
  login_answered: ['consent', 'code', 'done'],
  consent: ['consent_answered', 'done'],
  consent_answered: ['code', 'done'],
  code: ['redeemed', 'done'],
  redeemed: [],
  done: [],
})

/** The stages a flow may be created in. */
export type InitialStage = 'pushed' | 'login'
