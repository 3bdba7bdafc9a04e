import type { FastifyInstance } from 'fastify'
import { OAuthError } from './oauth-errors.js'

/** RFC 8707 §2: `resource` may be repeated; RFC 6749 §3.2 forbids repeating any other parameter. */
const REPEATABLE = new Set(['resource'])

/** An `application/x-www-form-urlencoded` body: a repeatable parameter given twice becomes an array. */
export type FormBody = Record<string, string | string[]>

/** Parses the OAuth endpoints' form bodies, refusing a repeated parameter rather than picking one of its values. */
export function installFormParser(app: FastifyInstance): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    const parsed: FormBody = Object.create(null) as FormBody
    for (const [name, value] of new URLSearchParams(body as string)) {
      const previous = parsed[name]
      if (previous === undefined) parsed[name] = value
      else if (!REPEATABLE.has(name)) return done(new OAuthError('invalid_request', `The parameter ${name} is repeated`), undefined)
      else if (Array.isArray(previous)) previous.push(value)
      else parsed[name] = [previous, value]
    }
    done(null, parsed)
  })
}
