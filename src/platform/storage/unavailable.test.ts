import { describe, expect, it } from 'vitest'
import { isDatabaseUnavailable } from './unavailable.js'

const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code })

describe('isDatabaseUnavailable', () => {
  it('counts what passes with time: a server away, restarting, terminating the connection, locked, full, or aborting for a concurrent transaction', () => {
    for (const error of [
      coded('ECONNREFUSED'),
      coded('ECONNRESET'),
      coded('57P01', 'terminating connection due to administrator command'),
      coded('57P03', 'the database system is starting up'),
      coded('08006'),
      coded('25006', 'cannot execute INSERT in a read-only transaction'),
      new Error('Connection terminated unexpectedly'),
      new Error('Connection terminated due to connection timeout', { cause: new Error('Connection terminated unexpectedly') }),
      new Error('timeout exceeded when trying to connect'),
      new Error('Client has encountered a connection error and is not queryable'),
      new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')]),
      coded('SQLITE_BUSY', 'database is locked'),
      coded('SQLITE_BUSY_SNAPSHOT'),
      coded('SQLITE_FULL', 'database or disk is full'),
      coded('40001', 'could not serialize access due to concurrent update'),
      coded('40P01', 'deadlock detected'),
    ]) {
      expect(isDatabaseUnavailable(error), String(error)).toBe(true)
    }
  })

  it('leaves out what the request or Herald got wrong', () => {
    for (const error of [coded('23505'), coded('22021'), coded('SQLITE_CONSTRAINT_UNIQUE'), coded('SQLITE_ERROR'), new TypeError('x is undefined'), 'text', undefined]) {
      expect(isDatabaseUnavailable(error), String(error)).toBe(false)
    }
  })
})
