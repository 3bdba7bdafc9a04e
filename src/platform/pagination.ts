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

/**
 * The page a keyset query answered, given it asked for `limit + 1` rows: the extra row only says that more
 * follow, and the cursor is the position of the last row shown.
 */
export function toPage<R, V>(rows: readonly R[], limit: number, positionOf: (row: R) => string, view: (row: R) => V): Page<V> {
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  return { data: page.map(view), next_cursor: rows.length > limit && last !== undefined ? encodeCursor(positionOf(last)) : null }
}
