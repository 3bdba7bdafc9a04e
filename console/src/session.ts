import type { TokenResponse } from './types.js'

// The signed-in state lives in this module's memory only: never in localStorage, sessionStorage or a cookie, so a
// reload or a closed tab forgets the token, and the client secret is used once and dropped.

/** The scopes the console's pages ask for; a token without one hides what needs it. */
export const SCOPES = {
  webhooksRead: 'herald:webhooks:read',
  webhooksWrite: 'herald:webhooks:write',
  publish: 'herald:events:publish',
  settings: 'herald:settings:write',
  clientsRead: 'herald:clients:read',
  clientsWrite: 'herald:clients:write',
  scopesWrite: 'herald:scopes:write',
  keys: 'herald:keys:write',
  sessions: 'herald:sessions:write',
} as const

export interface Session {
  accountId: string
  clientId: string
  accessToken: string
  scopes: ReadonlySet<string>
  /** Browser time (ms) when the token expires, from `expires_in`. */
  expiresAt: number
}

type Listener = () => void

let current: Session | undefined
/** Why the last session ended, shown on the sign-in page. */
let endedBecause: string | undefined
const listeners = new Set<Listener>()

export function currentSession(): Session | undefined {
  return current
}

export function signOutReason(): string | undefined {
  return endedBecause
}

export function can(scope: string): boolean {
  return current?.scopes.has(scope) ?? false
}

/**
 * A string member of a JWT's header (`section` 0) or claims (1), read without verifying anything: for what the console
 * shows or compares, never for what it trusts.
 */
export function jwtMember(token: string, section: 0 | 1, name: string): string | undefined {
  const part = token.split('.')[section]
  if (!part) return undefined
  try {
    const value = (JSON.parse(atob(part.replace(/-/g, '+').replace(/_/g, '/'))) as Record<string, unknown>)[name]
    return typeof value === 'string' ? value : undefined
  } catch {
    return undefined
  }
}

/** The key that signed the session's token (the `kid` of its JWT header), when it says. */
export function sessionKeyId(): string | undefined {
  return current && jwtMember(current.accessToken, 0, 'kid')
}

export function onSessionChange(listener: Listener): () => void {
  listeners.add(listener)
  return () => listeners.delete(listener)
}

export function startSession(session: Session): void {
  current = session
  endedBecause = undefined
  for (const listener of listeners) listener()
}

/** A message for the sign-in page without a session having ended, such as a spent sign-in link. */
export function setSignInNotice(message: string): void {
  endedBecause = message
  for (const listener of listeners) listener()
}

export function endSession(reason?: string): void {
  current = undefined
  endedBecause = reason
  for (const listener of listeners) listener()
}

/** The origin and path Herald is served at (PUBLIC_URL), from the console's own `<base href>` (…/console/). */
export function heraldRoot(): string {
  return new URL('..', document.baseURI).href
}

export function accountBase(accountId: string): string {
  return `${heraldRoot()}accounts/${encodeURIComponent(accountId)}`
}

/** RFC 6749 §2.3.1: the client id and secret are form-urlencoded before they go into HTTP Basic. */
function basic(clientId: string, secret: string): string {
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+')
  return `Basic ${btoa(`${encode(clientId)}:${encode(secret)}`)}`
}

/** What a failed token request says, in words a person can act on. */
async function tokenFailure(response: Response): Promise<string> {
  const body = (await response.json().catch(() => ({}))) as { error?: string; error_description?: string; detail?: string }
  if (response.status === 404) return body.detail ?? 'There is no such account.'
  if (body.error === 'invalid_client') return 'The client id or secret is wrong, or the client is disabled.'
  if (body.error === 'unauthorized_client') return 'This client may not use client_credentials: sign in with a management client.'
  return body.error_description ?? body.detail ?? `The token endpoint answered ${response.status}.`
}

/** Signs in by client_credentials at the account's token endpoint; answers an error message, or nothing. */
export async function signIn(accountId: string, clientId: string, secret: string): Promise<string | undefined> {
  let response: Response
  try {
    response = await fetch(`${accountBase(accountId)}/oauth/tokens`, {
      method: 'POST',
      // No cookies: the console authenticates with its token alone, and a 401 must not bring up a browser prompt.
      credentials: 'omit',
      headers: { authorization: basic(clientId, secret), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials' }),
    })
  } catch {
    return 'Herald could not be reached.'
  }
  if (!response.ok) return tokenFailure(response)
  const token = (await response.json()) as TokenResponse
  const scopes = new Set(token.scope.split(' ').filter(Boolean))
  if (!scopes.has(SCOPES.webhooksRead)) return `This client's token lacks ${SCOPES.webhooksRead}, which every page of the console needs.`
  startSession({ accountId, clientId, accessToken: token.access_token, scopes, expiresAt: Date.now() + token.expires_in * 1000 })
  return undefined
}
