import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'

// A small history router: the console's own paths live under its <base href> (…/console/), and their query strings
// are the pages' state (filters, cursors), so any view can be bookmarked and shared.

export interface Place {
  /** The path below the console's base, starting with `/`: `/`, `/deliveries/dlv_…`, `/endpoints`. */
  path: string
  query: URLSearchParams
}

function basePath(): string {
  return new URL(document.baseURI).pathname
}

function here(): Place {
  const base = basePath()
  const { pathname, search } = window.location
  const path = pathname.startsWith(base) ? `/${pathname.slice(base.length)}` : '/'
  return { path, query: new URLSearchParams(search) }
}

/** The browser URL of a console path such as `/deliveries?status=failed`. */
export function href(to: string): string {
  return `${basePath()}${to.replace(/^\//, '')}`
}

const listeners = new Set<() => void>()
window.addEventListener('popstate', () => listeners.forEach((listener) => listener()))

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (options.replace) window.history.replaceState(null, '', href(to))
  else window.history.pushState(null, '', href(to))
  window.scrollTo(0, 0)
  listeners.forEach((listener) => listener())
}

export function usePlace(): Place {
  const [place, setPlace] = useState(here)
  useEffect(() => {
    const update = () => setPlace(here())
    listeners.add(update)
    return () => void listeners.delete(update)
  }, [])
  return place
}

/** A link within the console: a real href (open in a new tab works), followed without reloading the page. */
export function Link(props: { to: string; class?: string; current?: boolean; children: ComponentChildren }) {
  const onClick = (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
    event.preventDefault()
    navigate(props.to)
  }
  return (
    <a href={href(props.to)} class={props.class} aria-current={props.current ? 'page' : undefined} onClick={onClick}>
      {props.children}
    </a>
  )
}
