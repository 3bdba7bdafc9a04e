import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifyInstance } from 'fastify'

/**
 * Request validation with two Ajv instances. Bodies are validated strictly: no type coercion and no silent
 * removal of unknown fields, so `{"ttl": "60"}` or a misspelt field is an error rather than a surprise.
 * Query strings and path parameters arrive as text, so those are coerced to the schema's types.
 */
export function installValidation(app: FastifyInstance): void {
  const base = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false } as const
  const strict = addFormats.default(new Ajv({ ...base, coerceTypes: false }))
  const coercing = addFormats.default(new Ajv({ ...base, coerceTypes: 'array' }))
  app.setValidatorCompiler(({ schema, httpPart }) =>
    httpPart === 'body' ? strict.compile(schema) : coercing.compile(schema),
  )
}
