import { ProblemError } from './http/problems.js'

/** A page of a list: `{ data, next_cursor }`, where a null cursor means the list is exhausted. */
export interface Page<T> {
  data: T[]
  next_cursor: string | null
}

export const DEFAULT_PAGE_SIZE = 50
export const MAX_PAGE_SIZE = 200

/** Cursors are opaque to callers: the keyset position, base64url-encoded so nobody builds one by hand. */
export function encodeCursor(position: string): string {
  return Buffer.from(position, 'utf8').toString('base64url')
}

export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined
  const position = Buffer.from(cursor, 'base64url').toString('utf8')
  // Positions are ids and names this API made: printable ASCII only.
  if (!position || encodeCursor(position) !== cursor || !/^[\x21-\x7e]+$/.test(position)) {
    throw new ProblemError('validation_failed', 'cursor is not one this API returned', [{ pointer: '/querystring/cursor', message: 'is not a valid cursor' }])
  }
  return position
}
