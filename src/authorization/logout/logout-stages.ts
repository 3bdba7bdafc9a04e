import type { Kysely, Updateable } from 'kysely'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { DB, LogoutRequestsTable } from '../../platform/storage/schema.js'
import { StageMachine } from '../stage-machine.js'

export type LogoutStage = LogoutRequestsTable['stage']

/** A logout request is written in this stage, waiting for the logout app. */
export const LOGOUT_FIRST_STAGE: LogoutStage = 'waiting'

/**
 * A logout request's legal moves: the logout app answers once (accept or reject), then the browser brings the
 * verifier back once. Every other move is refused.
 */
export const LOGOUT_MOVES = new StageMachine<LogoutStage>('logout request', {
  waiting: ['accepted', 'rejected'],
  accepted: ['done'],
  rejected: ['done'],
  done: [],
})

/** What a move may change beside the stage. */
export type LogoutChanges = Omit<Updateable<LogoutRequestsTable>, 'id' | 'account_id' | 'stage'>

/**
 * Moves `request` from the stage it was read in to `to`, with `changes`, as a compare-and-set on that stage: false
 * when someone moved it first. A move the table lacks throws StageMoveRefused before anything is written.
 */
export async function advanceLogout(db: Kysely<DB>, accountId: string, request: { id: string; stage: LogoutStage }, to: LogoutStage, changes: LogoutChanges): Promise<boolean> {
  LOGOUT_MOVES.assertMove(request.stage, to)
  const result = await forAccount(db, accountId)
    .updateTable('logout_requests')
    .set({ ...changes, stage: to })
    .where('id', '=', request.id)
    .where('stage', '=', request.stage)
    .executeTakeFirst()
  return result.numUpdatedRows === 1n
}
