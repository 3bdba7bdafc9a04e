import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import { Type } from 'typebox'
import type { DB } from '../storage/schema.js'
import { ProblemError } from './problems.js'
import type { App } from './types.js'

/** Liveness (the process answers) and readiness (it can reach its database). */
export function healthRoutes(app: App, db: Kysely<DB>): void {
  const Status = Type.Object({ status: Type.Literal('ok') })
  app.get('/healthz', { schema: { summary: 'Liveness', tags: ['health'], response: { 200: Status } } }, async () => ({ status: 'ok' as const }))
  app.get('/readyz', { schema: { summary: 'Readiness: the database answers', tags: ['health'], response: { 200: Status } } }, async (request) => {
    try {
      await sql`select 1`.execute(db)
    } catch (error) {
      request.log.warn({ err: error }, 'readiness check: database unreachable')
      throw new ProblemError('service_unavailable', 'The database is unreachable')
    }
    return { status: 'ok' as const }
  })
}
