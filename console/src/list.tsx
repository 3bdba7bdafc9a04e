import type { ComponentChildren } from 'preact'
import { query } from './api.js'
import { Link } from './router.js'
import { ErrorNote, type Loaded } from './ui.js'

// The pieces every list page is built of: how its loading went, its table, and its pages.

/** What went wrong loading, and `Loading…` until the first answer has come. */
export function LoadState(props: { of: Loaded<unknown> }) {
  return (
    <>
      {props.of.error !== undefined && <ErrorNote error={props.of.error} />}
      {props.of.loading && !props.of.data && <p class="muted">Loading…</p>}
    </>
  )
}

/** A column's heading; a column of numbers has its heading on the right, over them. */
export type Heading = string | { number: string }

/**
 * The rows under their column headings (a `false` heading is a column left out); `empty`, when given, stands instead
 * of a table with no rows.
 */
export function Table<T>(props: { headings: Array<Heading | false>; rows: T[]; row(item: T): ComponentChildren; empty?: ComponentChildren }) {
  if (props.rows.length === 0 && props.empty !== undefined) return <>{props.empty}</>
  return (
    <table class="list">
      <thead>
        <tr>
          {props.headings.map(
            (heading) =>
              heading !== false &&
              (typeof heading === 'string' ? (
                <th scope="col">{heading}</th>
              ) : (
                <th scope="col" class="number">
                  {heading.number}
                </th>
              )),
          )}
        </tr>
      </thead>
      <tbody>{props.rows.map((item) => props.row(item))}</tbody>
    </table>
  )
}

/**
 * Links to a list's first page (once past it) and its next one (while there is one): `path` with `params`, and the
 * API's cursor for the next.
 */
export function Pager(props: {
  path: string
  params?: Record<string, string | null>
  cursor: string | null
  next: string | null | undefined
  first?: string
  later?: string
}) {
  return (
    <nav class="pager" aria-label="Pages">
      {props.cursor && <Link to={`${props.path}${query({ ...props.params })}`}>{props.first ?? 'First page'}</Link>}
      {props.next && <Link to={`${props.path}${query({ ...props.params, cursor: props.next })}`}>{props.later ?? 'Next page'}</Link>}
    </nav>
  )
}
