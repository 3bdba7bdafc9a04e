import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'
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
    // A table wider than the screen scrolls inside its own box, not the page.
    <div class="table-scroll">
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
    </div>
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

/** How often a live list reads itself again, counted from its last answer. */
const LIVE_MS = 5000

/** Whether lists refresh themselves: on until the user turns it off, and so for the rest of the session. */
let liveChosen = true

export interface Live {
  on: boolean
  set(on: boolean): void
}

/**
 * Reloads `list` every few seconds while live is on, the page is shown and the last load has answered, as its own
 * Refresh would: the same query (filters, page) every time, so it never moves the user elsewhere. Nothing runs once
 * the page is hidden, and a page shown again reads at once; nothing is left running when the component goes.
 */
export function useLive(list: Loaded<unknown>): Live {
  const [on, setOn] = useState(liveChosen)
  useEffect(() => {
    if (!on || list.loading) return
    const timer = setTimeout(() => {
      if (!document.hidden) list.reload()
    }, LIVE_MS)
    return () => clearTimeout(timer)
  }, [on, list.loading, list.reload])
  useEffect(() => {
    if (!on) return
    const shown = () => {
      if (!document.hidden) list.reload()
    }
    document.addEventListener('visibilitychange', shown)
    return () => document.removeEventListener('visibilitychange', shown)
  }, [on, list.reload])
  return {
    on,
    set: (next) => {
      liveChosen = next
      setOn(next)
    },
  }
}

/** The switch of a live list, beside its Refresh. */
/** A page's Live toggle and Refresh button, for the list or item it shows. */
export function LiveRefresh(props: { of: Loaded<unknown> }) {
  const live = useLive(props.of)
  return (
    <div class="actions">
      <LiveToggle live={live} />
      <button type="button" class="secondary" onClick={props.of.reload}>
        Refresh
      </button>
    </div>
  )
}

export function LiveToggle(props: { live: Live }) {
  return (
    <label class="check live" title={`Reads the list again every ${LIVE_MS / 1000} seconds while the page is shown`}>
      <input type="checkbox" checked={props.live.on} onChange={(event) => props.live.set(event.currentTarget.checked)} />
      Live
    </label>
  )
}
