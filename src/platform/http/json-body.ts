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
 * JSON bodies as Fastify parses them (`__proto__` and `constructor.prototype` refused), then refused with 400
 * `invalid_json` when they nest deeper than MAX_JSON_DEPTH or hold a lone surrogate, in a value or a key.
 */
export function installJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parse(request, body as string, (error, value: unknown) => {
      if (error) return done(error, undefined)
      const problem = unacceptable(value)
      if (problem === undefined) return done(null, value)
      done(new ProblemError('invalid_json', problem), undefined)
    })
  })
}

/** Why `value` is refused, or undefined. Walked without recursion, since its depth is what is being checked. */
function unacceptable(value: unknown): string | undefined {
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }]
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    if (typeof item.value === 'string') {
      if (LONE_SURROGATE.test(item.value)) return HOLDS_LONE_SURROGATE
      continue
    }
    if (typeof item.value !== 'object' || item.value === null) continue
    const depth = item.depth + 1
    if (depth > MAX_JSON_DEPTH) return `The body nests arrays and objects more than ${MAX_JSON_DEPTH} deep`
    for (const [key, member] of Object.entries(item.value)) {
      if (LONE_SURROGATE.test(key)) return HOLDS_LONE_SURROGATE
      pending.push({ value: member, depth })
    }
  }
  return undefined
}
