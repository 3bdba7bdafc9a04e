import { parse, serialize } from 'cookie'
import { isLoopbackHttp } from '../../platform/app-urls.js'

/** Binds a flow to the browser that started it, so a leaked verifier can't be completed elsewhere. */
export const BROWSER_COOKIE = 'herald_browser'
/** Names the browser's remembered session (see BrowserSessions). */
export const SESSION_COOKIE = 'herald_session'

export interface CookieToSet {
  name: string
  value: string
  /** Seconds; absent for a cookie that ends with the browser session. */
  maxAge?: number
}

/** The cookies of a request. */
export function readCookies(header: string | undefined): Record<string, string | undefined> {
  return header === undefined ? {} : parse(header)
}

/**
 * A `Set-Cookie` value for the account's base path: HttpOnly, SameSite=Lax (the redirects back from the login app
 * are top-level navigations, which Lax lets through), and Secure unless the issuer is plain http on loopback.
 */
export function setCookieHeader(issuer: string, cookie: CookieToSet): string {
  const url = new URL(issuer)
  return serialize(cookie.name, cookie.value, {
    path: `${url.pathname}/`,
    httpOnly: true,
    sameSite: 'lax',
    secure: !isLoopbackHttp(url),
    ...(cookie.maxAge !== undefined && { maxAge: cookie.maxAge }),
  })
}
