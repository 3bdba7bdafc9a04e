import { UntrustedRequestError } from '../sign-in/authorization-request.js'
import type { BrowserSession } from '../sign-in/browser-sessions.js'
import type { IdTokenHint } from '../token/id-token-hint.js'

/** Whose logout it is, and the session it may end (none when `sessionId` is null). */
export interface LogoutSession {
  subject: string | null
  sessionId: string | null
}

/**
 * The session a logout may end (OpenID Connect RP-Initiated Logout 1.0 §2, §6). With a hint: the browser's session
 * when it is the hint's (its `sub`, and its `sid` when the hint has one); a hint for another session is suspect (§2:
 * the OP MAY decline) and refused, so a link carrying one user's ID token can't end another user's session. A browser
 * without a session ends only the session the hint names, if it is still the hint subject's (BrowserSessions.end
 * checks both). Without a hint (only with a logout app, which asks the user): the browser's session.
 */
export function logoutSession(browser: BrowserSession | undefined, hint: IdTokenHint | undefined): LogoutSession {
  if (!hint) return { subject: browser?.subject ?? null, sessionId: browser?.id ?? null }
  if (!browser) return { subject: hint.subject, sessionId: hint.sessionId }
  if (browser.subject !== hint.subject || (hint.sessionId !== null && hint.sessionId !== browser.id)) {
    throw new UntrustedRequestError('invalid_request', "id_token_hint is not of the browser's session")
  }
  return { subject: browser.subject, sessionId: browser.id }
}
