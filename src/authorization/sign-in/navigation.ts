import type { CookieToSet } from './cookies.js'
import type { ResponseTarget } from './authorization-request.js'

/** Where authorize sends the browser next, and the cookies it sets on the way. */
export type Navigation =
  | { kind: 'redirect'; location: string; cookies: CookieToSet[] }
  /** OAuth 2.0 Form Post Response Mode: the parameters are posted to the client by an auto-submitting form. */
  | { kind: 'form_post'; action: string; fields: Record<string, string>; cookies: CookieToSet[] }
  /** Herald's own page where there is nowhere to go (a logout with neither a post_logout_redirect_uri nor the account's post_logout_url). */
  | { kind: 'page'; title: string; text: string; cookies: CookieToSet[] }

/** `url` with `params` added to its query, keeping the query it has (RFC 6749 §3.1.2: it must be retained). */
export function withQuery(url: string, params: Record<string, string>): string {
  const target = new URL(url)
  for (const [name, value] of Object.entries(params)) target.searchParams.append(name, value)
  return target.href
}

/**
 * An authorization response or error for the client, at its trusted redirect_uri, by its response mode. Every one
 * carries `iss` (RFC 9207), so a client talking to several servers can tell which one answered (mix-up attacks,
 * RFC 9700 §4.4), and the request's `state` when it had one.
 */
export function toClient(target: ResponseTarget, issuer: string, params: Record<string, string>, cookies: CookieToSet[] = []): Navigation {
  const fields = { ...params, ...(target.state !== null && { state: target.state }), iss: issuer }
  if (target.responseMode === 'form_post') return { kind: 'form_post', action: target.redirectUri, fields, cookies }
  return { kind: 'redirect', location: withQuery(target.redirectUri, fields), cookies }
}
