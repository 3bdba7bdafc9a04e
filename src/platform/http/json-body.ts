import type { FastifyInstance } from 'fastify'
import { ProblemError } from './problems.js'

/**
 * Arrays and objects nested deeper than this are refused (serde_json's default limit). Event data is stored and
 * sent as given, but comparing a replayed publish (canonical JSON) and JSON.stringify recurse: at about 4,000
 * levels, a body within the size limit overflowed the stack, a 500.
 */
const MAX_JSON_DEPTH = 128

/**
 * A UTF-16 surrogate without its pair, as a JSON `\ud800` escape produces. Neither database keeps one as sent (both
 * store U+FFFD in its place), so an idempotency key holding one no longer matched itself when read back.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const HOLDS_LONE_SURROGATE = 'The body holds a lone UTF-16 surrogate (an unpaired \\ud800–\\udfff escape)'

/**
 * A NUL character: PostgreSQL refuses it in text and in jsonb, SQLite stores it, so the same request was stored on
 * one and an error on the other. No field of Herald's needs one.
 */
const NUL = '\u0000'

/**
 * JSON bodies as Fastify parses them (`__proto__` and `constructor.prototype` refused), then refused with 400
 * `invalid_json` when they nest deeper than MAX_JSON_DEPTH or hold a lone surrogate, and with 400
 * `validation_failed` pointing at the value when a string holds a NUL, in a value or a key.
 */
export function installJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parse(request, body as string, (error, value: unknown) => {
      if (error) return done(error, undefined)
      const problem = unacceptable(value)
      if (problem === undefined) return done(null, value)
      done(problem, undefined)
    })
  })
}

/** A value met in the walk, with how it was reached, from which its JSON pointer is made only when needed. */
interface Visit {
  value: unknown
  depth: number
  parent?: Visit
  key?: string
}

/** Why `value` is refused, or undefined. Walked without recursion, since its depth is what is being checked. */
function unacceptable(value: unknown): ProblemError | undefined {
  const pending: Visit[] = [{ value, depth: 0 }]
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    if (typeof item.value === 'string') {
      if (LONE_SURROGATE.test(item.value)) return new ProblemError('invalid_json', HOLDS_LONE_SURROGATE)
      if (item.value.includes(NUL)) return holdsNul(item)
      continue
    }
    if (typeof item.value !== 'object' || item.value === null) continue
    const depth = item.depth + 1
    if (depth > MAX_JSON_DEPTH) return new ProblemError('invalid_json', `The body nests arrays and objects more than ${MAX_JSON_DEPTH} deep`)
    for (const [key, member] of Object.entries(item.value)) {
      if (LONE_SURROGATE.test(key)) return new ProblemError('invalid_json', HOLDS_LONE_SURROGATE)
      const visit = { value: member, depth, parent: item, key }
      if (key.includes(NUL)) return holdsNul(visit)
      pending.push(visit)
    }
  }
  return undefined
}

function holdsNul(visit: Visit): ProblemError {
  const keys: string[] = []
  for (let at: Visit | undefined = visit; at?.key !== undefined; at = at.parent) keys.unshift(at.key)
  // RFC 6901 §3: `~` and `/` in a key are escaped.
  const pointer = `/body${keys.map((key) => `/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('')}`
  return new ProblemError('validation_failed', `${pointer.slice('/body/'.length) || 'The body'} contains a NUL character (U+0000)`, [
    { pointer, message: 'must not contain a NUL character (U+0000)' },
  ])
}
