import { accountBase, jwtMember, startSession, SCOPES } from './session.js'
import type { ConsoleToken } from './types.js'

// A sign-in link (`herald console-link`, or the operator API) is `{PUBLIC_URL}/console/#account=ACCOUNT&link=CODE`.
// The code sits in the fragment so that it never reaches a server log or a Referer; the console takes it out of the
// address bar before anything else runs (so it is neither bookmarked nor kept in history) and spends it once.

export interface SignInLink {
  accountId: string
  code: string
}

/** The link in the address bar's fragment, if there is one, removed from the address bar at once. */
export function takeSignInLink(): SignInLink | undefined {
  const fragment = new URLSearchParams(window.location.hash.slice(1))
  const accountId = fragment.get('account')
  const code = fragment.get('link')
  if (!accountId || !code) return undefined
  const { pathname, search } = window.location
  window.history.replaceState(null, '', `${pathname}${search}`)
  return { accountId, code }
}

export const LINK_SPENT = 'This sign-in link was already used or has expired: each link works once, for at most 10 minutes. Ask for a new one (herald console-link), or sign in with a management client.'

/** The `client_id` claim of the token (a JWT), for the header's hover text. */
function clientOf(token: string): string {
  return jwtMember(token, 1, 'client_id') ?? 'sign-in link'
}

/** Exchanges the link's code for a token held in memory; answers an error message, or nothing once signed in. */
export async function exchangeSignInLink(link: SignInLink): Promise<string | undefined> {
  let response: Response
  try {
    response = await fetch(`${accountBase(link.accountId)}/console-links/exchange`, {
      method: 'POST',
      credentials: 'omit',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ code: link.code }),
    })
  } catch {
    return 'Herald could not be reached to use the sign-in link.'
  }
  if (response.status === 401) return LINK_SPENT
  if (!response.ok) {
    const problem = (await response.json().catch(() => ({}))) as { detail?: string; title?: string }
    return `The sign-in link was refused: ${problem.detail ?? problem.title ?? `Herald answered ${response.status}`}.`
  }
  const token = (await response.json()) as ConsoleToken
  const scopes = new Set(token.scope.split(' ').filter(Boolean))
  if (!scopes.has(SCOPES.webhooksRead)) return `The sign-in link's token lacks ${SCOPES.webhooksRead}, which every page of the console needs.`
  startSession({ accountId: link.accountId, clientId: clientOf(token.access_token), accessToken: token.access_token, scopes, expiresAt: Date.now() + token.expires_in * 1000 })
  return undefined
}
