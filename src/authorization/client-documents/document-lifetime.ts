import type { HttpHeaders } from '../../platform/outbound/fetch.js'

/** How long a fetched document is used at least and at most, whatever its caching headers say. */
export const DOCUMENT_LIFETIME_BOUNDS_MS = { minimum: 60_000, maximum: 24 * 3600_000 } as const

/**
 * How long a metadata document fetched at `fetchedAt` stays fresh, from its caching headers (RFC 9111 §4.2.1):
 * `max-age` less `Age`, else `Expires` less `Date`; `no-store` and `no-cache` mean no reuse at all. Clamped to
 * DOCUMENT_LIFETIME_BOUNDS_MS: the floor stops a document from being fetched on every request, the ceiling bounds how
 * long a changed document goes unseen. No header: the floor.
 */
export function documentLifetimeMs(headers: HttpHeaders, fetchedAt: number): number {
  const directives = cacheControl(single(headers['cache-control']))
  const { minimum, maximum } = DOCUMENT_LIFETIME_BOUNDS_MS
  let lifetime = minimum
  if (directives.has('no-store') || directives.has('no-cache')) lifetime = minimum
  else if (directives.has('max-age')) lifetime = (seconds(directives.get('max-age')) - seconds(single(headers.age))) * 1000
  else {
    const expires = Date.parse(single(headers.expires) ?? '')
    const date = Date.parse(single(headers.date) ?? '')
    if (!Number.isNaN(expires)) lifetime = expires - (Number.isNaN(date) ? fetchedAt : date)
  }
  return Math.min(maximum, Math.max(minimum, lifetime))
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value
}

/** The directives of a Cache-Control header, by lower-case name, with their values unquoted. */
function cacheControl(header: string | undefined): Map<string, string | undefined> {
  const directives = new Map<string, string | undefined>()
  for (const part of (header ?? '').split(',')) {
    const [name = '', value] = part.split('=', 2).map((text) => text.trim())
    if (name !== '') directives.set(name.toLowerCase(), value?.replace(/^"(.*)"$/, '$1'))
  }
  return directives
}

/** A delta-seconds value (RFC 9111 §1.2.2); anything else counts as 0. */
function seconds(value: string | undefined): number {
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : 0
}
