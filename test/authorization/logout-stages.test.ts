import { expect, it } from 'vitest'
import { LOGOUT_FIRST_STAGE, LOGOUT_MOVES, type LogoutStage, advanceLogout } from '../../src/authorization/logout/logout-stages.js'
import { StageMoveRefused } from '../../src/authorization/stage-machine.js'
import { forAccount } from '../../src/platform/storage/account-queries.js'
import { forEachDialect, useHerald } from '../support/herald.js'
import { createAccount } from '../support/http.js'

/** Every stage, checked complete by the compiler. */
const STAGES = Object.keys({ waiting: true, accepted: true, rejected: true, done: true } satisfies Record<LogoutStage, true>) as LogoutStage[]
/** The moves a logout request may make, written out apart from the table under test. */
const ALLOWED = new Set(['waiting→accepted', 'waiting→rejected', 'accepted→done', 'rejected→done'])

/** The logout request's declared stages: each move is a compare-and-set, and a move the table lacks is refused. */
forEachDialect((dialect) => {
  const h = useHerald(dialect)

  it('declares every stage, starting at waiting', () => {
    expect([...LOGOUT_MOVES.stages].sort()).toEqual([...STAGES].sort())
    expect(LOGOUT_FIRST_STAGE).toBe('waiting')
  })

  it('makes every allowed move and refuses every other, writing nothing', async () => {
    const account = await createAccount(h.current)
    const requests = () => forAccount(h.current.herald.database.db, account.id)
    const now = h.current.clock.now()
    const outcomes: string[] = []
    for (const from of STAGES) {
      for (const to of STAGES) {
        const id = `lo_${from}_${to}`
        await requests()
          .insertInto('logout_requests', { id, client_id: null, session_id: null, subject: null, stage: from, request: '{}', challenge: null, handle: 'before', expires_at: now + 60_000, created_at: now, updated_at: now })
          .execute()
        const moved = await advanceLogout(h.current.herald.database.db, account.id, { id, stage: from }, to, { handle: 'after' }).catch((error: unknown) => error)
        const row = await requests().selectFrom('logout_requests').select(['stage', 'handle']).where('id', '=', id).executeTakeFirstOrThrow()
        if (moved === true) {
          expect(row).toEqual({ stage: to, handle: 'after' })
          outcomes.push(`${from}→${to}`)
        } else {
          expect(moved, `${from}→${to}`).toBeInstanceOf(StageMoveRefused)
          expect(row).toEqual({ stage: from, handle: 'before' })
        }
      }
    }
    expect(new Set(outcomes)).toEqual(ALLOWED)
  })

  it('moves only from the stage it was read in', async () => {
    const account = await createAccount(h.current)
    const db = h.current.herald.database.db
    const now = h.current.clock.now()
    await forAccount(db, account.id)
      .insertInto('logout_requests', { id: 'lo_race', client_id: null, session_id: null, subject: null, stage: 'waiting', request: '{}', challenge: null, handle: null, expires_at: now + 60_000, created_at: now, updated_at: now })
      .execute()
    const read = { id: 'lo_race', stage: 'waiting' } as const
    expect(await advanceLogout(db, account.id, read, 'accepted', {})).toBe(true)
    expect(await advanceLogout(db, account.id, read, 'rejected', {})).toBe(false)
    const other = await createAccount(h.current, 'other')
    expect(await advanceLogout(db, other.id, { id: 'lo_race', stage: 'accepted' }, 'done', {})).toBe(false)
    expect((await forAccount(db, account.id).selectFrom('logout_requests').select('stage').where('id', '=', 'lo_race').executeTakeFirstOrThrow()).stage).toBe('accepted')
  })
})
