import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isDatabaseUnavailable } from '../storage/unavailable.js'
import { ThrottledWarning } from '../throttled-warning.js'
import { OAuthError } from './oauth-errors.js'
import { type FieldError, ProblemError } from './problems.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * OAuth endpoints answer RFC 6749 error objects; the authorization endpoint, which a browser shows, plain text
     * (RFC 6749 §4.1.2.1: an error before the redirect_uri is trusted is shown to the user, never redirected);
     * everything else answers problem+json.
     */
    errorFormat?: 'oauth' | 'browser' | 'problem'
  }
}

/** How long a client should wait before trying again after a 503: about how soon Herald notices the database is back. */
export const RETRY_AFTER_SECONDS = 1

const UNAVAILABLE_DETAIL = 'The database is unavailable; try again after the time in Retry-After'

/**
 * The one place where errors become HTTP answers. Fastify's own errors (bad JSON, wrong content type, body too
 * large, schema failures) are translated into the route family's shape; a database that can't serve right now (see
 * isDatabaseUnavailable) is a 503 with `Retry-After`; anything else unexpected is logged and answered as a 500 that
 * reveals nothing.
 */
export function installErrorHandling(app: FastifyInstance): void {
  // One line per outage and interval, not one per request that met it.
  const unavailable = new ThrottledWarning('the database is unavailable; answering 503')
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof ProblemError) return sendProblem(reply, error)
    const format = request.routeOptions.config?.errorFormat
    const oauth = format === 'oauth'
    if (isDatabaseUnavailable(error)) {
      unavailable.report(request.log, error)
      if (format === 'browser') return sendPlain(reply, new OAuthError('temporarily_unavailable', UNAVAILABLE_DETAIL))
      return oauth ? sendOAuthError(reply, new OAuthError('temporarily_unavailable', UNAVAILABLE_DETAIL)) : sendProblem(reply, new ProblemError('service_unavailable', UNAVAILABLE_DETAIL))
    }
    if (oauth) return sendOAuthError(reply, toOAuthError(error, request))
    if (format === 'browser') return sendPlain(reply, toOAuthError(error, request))
    return sendProblem(reply, toProblem(error, request))
  })

  app.setNotFoundHandler((request, reply) => sendProblem(reply, routeNotFound(request)))
}

/** The answer to a request no route takes. */
export function routeNotFound(request: FastifyRequest): ProblemError {
  const path = request.url.split('?')[0] ?? '/'
  return new ProblemError('route_not_found', `No route for ${request.method} ${path}`)
}

export function sendProblem(reply: FastifyReply, problem: ProblemError): FastifyReply {
  if (problem.code === 'invalid_token' || problem.code === 'insufficient_scope') {
    // RFC 6750 §3: the challenge names the error, so clients can tell "get a new token" from "ask for more scope".
    const description = (problem.detail ?? '').replace(/["\\]/g, '')
    reply.header('www-authenticate', `Bearer error="${problem.code}", error_description="${description}"`)
  }
  // RFC 9110 §10.2.3: a 503 says when to come back.
  if (problem.status === 503) reply.header('retry-after', String(RETRY_AFTER_SECONDS))
  return reply.status(problem.status).type('application/problem+json').send(problem.toDocument())
}

export function sendOAuthError(reply: FastifyReply, error: OAuthError): FastifyReply {
  if (error.challenge) reply.header('www-authenticate', error.challenge)
  if (error.status === 503) reply.header('retry-after', String(RETRY_AFTER_SECONDS))
  return reply.status(error.status).header('cache-control', 'no-store').header('pragma', 'no-cache').header('referrer-policy', 'no-referrer').send(error.toBody())
}

/** An OAuth error as a browser shows it: plain text, never cached, never framed. */
function sendPlain(reply: FastifyReply, error: OAuthError): FastifyReply {
  if (error.status === 503) reply.header('retry-after', String(RETRY_AFTER_SECONDS))
  return reply
    .status(error.status)
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
    .header('content-security-policy', "frame-ancestors 'none'")
    .type('text/plain; charset=utf-8')
    .send(`${error.code}: ${error.description}\n`)
}

function toProblem(error: FastifyError, request: FastifyRequest): ProblemError {
  if (error.validation) {
    return new ProblemError('validation_failed', error.message, fieldErrors(error))
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ProblemError('unsupported_media_type', `Content-Type must be application/json`)
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ProblemError('payload_too_large')
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ProblemError('invalid_json', 'The body is empty but Content-Type is application/json')
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ProblemError('invalid_json')
  }
  if (error instanceof SyntaxError && error.statusCode === 400) return new ProblemError('invalid_json', error.message)
  if (error instanceof OAuthError) return new ProblemError('bad_request', error.description)
  if (isUnstorableText(error)) return new ProblemError('bad_request', 'The request contains text that cannot be stored, such as a NUL character')
  if (isClientError(error)) return new ProblemError(error.statusCode === 413 ? 'payload_too_large' : 'bad_request', error.message)
  request.log.error({ err: error }, 'unhandled error')
  return new ProblemError('internal_error')
}

function toOAuthError(error: FastifyError, request: FastifyRequest): OAuthError {
  if (error instanceof OAuthError) return error
  if (error.validation) return new OAuthError('invalid_request', error.message)
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return new OAuthError('invalid_request', 'Content-Type must be application/x-www-form-urlencoded')
  }
  if (isClientError(error)) return new OAuthError('invalid_request', error.message)
  if (isUnstorableText(error)) return new OAuthError('invalid_request', 'The request contains text that cannot be stored')
  request.log.error({ err: error }, 'unhandled error')
  return new OAuthError('server_error', 'An unexpected error occurred')
}

/**
 * PostgreSQL refuses NUL characters and invalid byte sequences in text (SQLSTATE 22021, 22P05). Inputs are
 * checked before they reach a query; this catches what a check missed, as the client's error it is.
 */
function isUnstorableText(error: FastifyError): boolean {
  return error.code === '22021' || error.code === '22P05'
}

function isClientError(error: FastifyError): boolean {
  return typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500
}

function fieldErrors(error: FastifyError): FieldError[] {
  return (error.validation ?? []).map((item) => {
    // Ajv reports a missing or unknown field on its parent object; point at the field itself.
    const field = item.keyword === 'additionalProperties' ? item.params.additionalProperty : item.keyword === 'required' ? item.params.missingProperty : undefined
    return {
      pointer: `/${error.validationContext ?? 'body'}${item.instancePath}${field === undefined ? '' : `/${String(field)}`}`,
      message: item.keyword === 'additionalProperties' ? 'is not a known field' : item.keyword === 'required' ? 'is required' : (item.message ?? 'is invalid'),
    }
  })
}
