import { describe, expect, it } from 'vitest'
import { UntrustedRequestError } from '../sign-in/authorization-request.js'
import type { BrowserSession } from '../sign-in/browser-sessions.js'
import type { IdTokenHint } from '../token/id-token-hint.js'
import { logoutSession } from './logout-session.js'

const browser: BrowserSession = { id: 'ses_1', subject: 'alice', authTime: 0, acr: null, amr: [], remembered: true, expiresAt: 1 }
const hint = (subject: string, sessionId: string | null): IdTokenHint => ({ subject, audience: ['rp'], sessionId })

describe('logoutSession', () => {
  it("ends the browser's session for a hint of it, with or without sid", () => {
    expect(logoutSession(browser, hint('alice', 'ses_1'))).toEqual({ subject: 'alice', sessionId: 'ses_1' })
    expect(logoutSession(browser, hint('alice', null))).toEqual({ subject: 'alice', sessionId: 'ses_1' })
  })

  it("refuses a hint of another user, or of another of the user's sessions", () => {
    expect(() => logoutSession(browser, hint('mallory', null))).toThrow(UntrustedRequestError)
    expect(() => logoutSession(browser, hint('mallory', 'ses_1'))).toThrow(UntrustedRequestError)
    expect(() => logoutSession(browser, hint('alice', 'ses_2'))).toThrow(UntrustedRequestError)
  })

  it('without a browser session, names only the hint’s; without a hint, the browser’s', () => {
    expect(logoutSession(undefined, hint('mallory', 'ses_9'))).toEqual({ subject: 'mallory', sessionId: 'ses_9' })
    expect(logoutSession(undefined, hint('mallory', null))).toEqual({ subject: 'mallory', sessionId: null })
    expect(logoutSession(browser, undefined)).toEqual({ subject: 'alice', sessionId: 'ses_1' })
    expect(logoutSession(undefined, undefined)).toEqual({ subject: null, sessionId: null })
  })
})
