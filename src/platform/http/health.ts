import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import { Type } from 'typebox'
import type { DB } from '../storage/schema.js'
import { ThrottledWarning } from '../throttled-warning.js'
import { PUBLIC } from './openapi.js'
import { ProblemError } from './problems.js'
import { problemResponse } from './schemas.js'
import type { App } from './types.js'

/**
 * Liveness (the process answers: it never needs the database, so an outage doesn't get a healthy process
 * restarted) and readiness (it can reach its database: a load balancer sends requests elsewhere meanwhile).
 */
export function healthRoutes(app: App, db: Kysely<DB>): void {
  const Status = (description: string) => Type.Object({ status: Type.Literal('ok') }, { description })
  // Probes come every few seconds for as long as an outage lasts.
  const unreachable = new ThrottledWarning('readiness check: the database is unreachable')
  app.get('/healthz', { schema: { summary: 'Liveness', security: PUBLIC, response: { 200: Status('The process answers') } } }, async () => ({ status: 'ok' as const }))
  const readiness = { 200: Status('The database answers'), 503: problemResponse('service_unavailable: the database is unreachable') }
  app.get('/readyz', { schema: { summary: 'Readiness: the database answers', security: PUBLIC, response: readiness } }, async (request) => {
    try {
      await sql`select 1`.execute(db)
    } catch (error) {
      unreachable.report(request.log, error)
      throw new ProblemError('service_unavailable', 'The database is unreachable')
    }
    return { status: 'ok' as const }
  })
}
