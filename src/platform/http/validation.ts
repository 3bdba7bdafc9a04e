import { Ajv, type ValidateFunction } from 'ajv'
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
  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (httpPart === 'body') return strict.compile(schema)
    const validate = coercing.compile(schema)
    return httpPart === 'querystring' ? refusingNul(validate) : validate
  })
}

/**
 * `validate`, but a query parameter holding a NUL is an error first: PostgreSQL refuses NUL in text, so a filter
 * holding one was a 400 there and matched nothing on SQLite. JSON bodies are checked as they are parsed (json-body.ts);
 * path parameters only name things, and a NUL in one names nothing (404).
 */
function refusingNul(validate: ValidateFunction): ValidateFunction {
  const wrapped = ((data: unknown) => {
    const name = nulParameter(data)
    if (name === undefined) {
      const valid = validate(data)
      wrapped.errors = validate.errors
      return valid
    }
    wrapped.errors = [{ instancePath: `/${name}`, schemaPath: '#', keyword: 'nul', params: {}, message: 'must not contain a NUL character (U+0000)' }]
    return false
  }) as ValidateFunction
  return wrapped
}

/** The first query parameter whose name or value holds a NUL; a repeated parameter arrives as an array. */
function nulParameter(query: unknown): string | undefined {
  if (typeof query !== 'object' || query === null) return undefined
  for (const [name, value] of Object.entries(query)) {
    const values: unknown[] = Array.isArray(value) ? value : [value]
    if (name.includes('\u0000') || values.some((item) => typeof item === 'string' && item.includes('\u0000'))) return name
  }
  return undefined
}

/**
 * `date-time` as Herald reads it (parseRfc3339): ajv-formats lets through a leap second, which JavaScript can't
 * represent, and an offset without its colon, and the routes read the text with the same function that checks it.
 */
function withDateTime(ajv: Ajv): Ajv {
  return ajv.addFormat('date-time', { type: 'string', validate: (text: string) => parseRfc3339(text) !== undefined })
}
