import { accountBase, currentSession, endSession } from './session.js'
import type { FieldError, Problem } from './types.js'

export const EXPIRED = 'Your session has ended (the token expired or was revoked). Sign in again to go on.'

/** A refusal of the management API, from its RFC 9457 problem document. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
    readonly fields: readonly FieldError[] = [],
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

/** Thrown after a 401 has ended the session: the sign-in page replaces the page, which has nothing to show. */
export class SessionEnded extends Error {}

export interface Page<T> {
  data: T[]
  next_cursor: string | null
}

/** One call to the signed-in account's management API, as `{base}{path}`; answers the parsed JSON body. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const session = currentSession()
  if (!session || Date.now() >= session.expiresAt) {
    endSession(session ? EXPIRED : undefined)
    throw new SessionEnded()
  }
  const headers: Record<string, string> = { authorization: `Bearer ${session.accessToken}`, accept: 'application/json' }
  if (body !== undefined) headers['content-type'] = 'application/json'
  let response: Response
  try {
    response = await fetch(`${accountBase(session.accountId)}${path}`, { method, headers, credentials: 'omit', body: body === undefined ? undefined : JSON.stringify(body) })
  } catch {
    throw new ApiError(0, undefined, 'Herald could not be reached. Check your connection and try again.')
  }
  if (response.status === 401) {
    endSession(EXPIRED)
    throw new SessionEnded()
  }
  if (response.status === 204) return undefined as T
  const parsed = (await response.json().catch(() => undefined)) as unknown
  if (!response.ok) {
    // Partial: a proxy in front of Herald may answer an error with any body, or none.
    const problem = (parsed ?? {}) as Partial<Problem>
    throw new ApiError(response.status, problem.code, problem.detail ?? problem.title ?? `Herald answered ${response.status}`, problem.errors)
  }
  return parsed as T
}

/** A query string of the parameters that have a value. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') search.set(name, String(value))
  const text = search.toString()
  return text ? `?${text}` : ''
}
