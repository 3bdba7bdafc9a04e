import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifyInstance } from 'fastify'
import { parseRfc3339 } from '../clock.js'

/**
 * Request validation with two Ajv instances. Bodies are validated strictly: no type coercion and no silent
 * removal of unknown fields, so `{"ttl": "60"}` or a misspelt field is an error rather than a surprise.
 * Query strings and path parameters arrive as text, so those are coerced to the schema's types.
 */
export function installValidation(app: FastifyInstance): void {
  const base = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false } as const
  const strict = withDateTime(addFormats.default(new Ajv({ ...base, coerceTypes: false })))
  const coercing = withDateTime(addFormats.default(new Ajv({ ...base, coerceTypes: 'array' })))
  app.setValidatorCompiler(({ schema, httpPart }) =>
    httpPart === 'body' ? strict.compile(schema) : coercing.compile(schema),
  )
}

/**
 * `date-time` as Herald reads it (parseRfc3339): ajv-formats lets through a leap second, which JavaScript can't
 * represent, and an offset without its colon, and the routes read the text with the same function that checks it.
 */
function withDateTime(ajv: Ajv): Ajv {
  return ajv.addFormat('date-time', { type: 'string', validate: (text: string) => parseRfc3339(text) !== undefined })
}
