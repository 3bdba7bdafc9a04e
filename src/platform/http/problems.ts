/**
 * The management and operator APIs' error codes: one closed set, each with its HTTP status and a title.
 * Answers are RFC 9457 problem documents carrying the code as `code`. docs/errors.md lists the same set, and
 * a test keeps the two equal.
 */
export const PROBLEMS = {
  bad_request: { status: 400, title: 'The request is malformed' },
  invalid_json: { status: 400, title: 'The request body is not valid JSON' },
  validation_failed: { status: 400, title: 'The request does not match its schema' },
  invalid_user_code: { status: 400, title: 'The user code is wrong, expired or used' },
  invalid_token: { status: 401, title: 'The access token is missing, invalid, expired or revoked' },
  insufficient_scope: { status: 403, title: 'The access token lacks a scope this operation requires' },
  not_found: { status: 404, title: 'The resource does not exist' },
  route_not_found: { status: 404, title: 'No route matches this method and path' },
  request_timeout: { status: 408, title: 'The request did not arrive in time' },
  conflict: { status: 409, title: 'The request conflicts with the current state of the resource' },
  payload_too_large: { status: 413, title: 'The request body exceeds the limit for this route' },
  unsupported_media_type: { status: 415, title: 'The request body has an unsupported content type' },
  too_many_requests: { status: 429, title: 'Too many attempts; try again later' },
  headers_too_large: { status: 431, title: 'The request headers are too large' },
  internal_error: { status: 500, title: 'An unexpected error occurred' },
  service_unavailable: { status: 503, title: 'The service cannot handle the request right now' },
} as const satisfies Record<string, { status: number; title: string }>

export type ProblemCode = keyof typeof PROBLEMS

export interface FieldError {
  /** JSON Pointer to the offending value, e.g. `/body/name`. */
  pointer: string
  message: string
}

export interface ProblemDocument {
  type: string
  title: string
  status: number
  code: ProblemCode
  detail?: string
  errors?: FieldError[]
}

export class ProblemError extends Error {
  readonly status: number

  constructor(
    readonly code: ProblemCode,
    readonly detail?: string,
    readonly errors?: FieldError[],
  ) {
    super(detail ?? PROBLEMS[code].title)
    this.name = 'ProblemError'
    this.status = PROBLEMS[code].status
  }

  toDocument(): ProblemDocument {
    return {
      type: problemType(this.code),
      title: PROBLEMS[this.code].title,
      status: this.status,
      code: this.code,
      ...(this.detail !== undefined && { detail: this.detail }),
      ...(this.errors !== undefined && { errors: this.errors }),
    }
  }
}

/** A stable URI naming the problem type (RFC 9457 §3.1.1); docs/errors.md explains each one. */
export function problemType(code: ProblemCode): string {
  return `urn:herald:problem:${code}`
}

export const notFound = (what: string): ProblemError => new ProblemError('not_found', `${what} does not exist`)
