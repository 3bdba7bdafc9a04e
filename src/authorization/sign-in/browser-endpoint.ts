import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Clock } from '../../platform/clock.js'
import { randomToken } from '../../platform/crypto/random.js'
import type { AccountSettings, SettingsStore } from '../../platform/settings/settings.js'
import { AuthorizationError, UntrustedRequestError } from './authorization-request.js'
import type { BrowserContext } from './authorize-flow.js'
import { readCookies, setCookieHeader } from './cookies.js'
import { type Navigation, toClient, withQuery } from './navigation.js'

/**
 * Answers a request a browser makes (authorize, logout): `step` decides where it goes next. An error for the client
 * goes to its verified redirect_uri; one that can't, to the account's error page or a plain 400.
 */
export async function answerInBrowser(
  deps: { settings: SettingsStore; clock: Clock },
  request: FastifyRequest,
  reply: FastifyReply,
  step: (context: BrowserContext) => Promise<Navigation>,
): Promise<FastifyReply> {
  browserFacing(reply)
  const { account, issuer } = request
  const settings = await deps.settings.get(account.id)
  if (!settings) throw new Error('An account without settings')
  const context: BrowserContext = { account, issuer, settings, cookies: readCookies(request.headers.cookie), address: request.ip, now: deps.clock.now() }
  const post = request.method === 'POST'
  try {
    return send(reply, await step(context), issuer, post)
  } catch (error) {
    if (error instanceof AuthorizationError) {
      return send(reply, toClient(error.target, issuer, { error: error.code, error_description: error.description }), issuer, post)
    }
    if (error instanceof UntrustedRequestError) return sendUntrusted(reply, settings, error, post)
    throw error
  }
}

/**
 * RFC 9700 §4.11 and §4.16: no caching, no referrer leaking codes, no framing (clickjacking); authorize never
 * answers CORS.
 */
function browserFacing(reply: FastifyReply): void {
  reply
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
    .header('content-security-policy', "frame-ancestors 'none'")
}

function send(reply: FastifyReply, navigation: Navigation, issuer: string, post: boolean): FastifyReply {
  if (navigation.cookies.length > 0) reply.header('set-cookie', navigation.cookies.map((cookie) => setCookieHeader(issuer, cookie)))
  if (navigation.kind === 'redirect') return reply.redirect(navigation.location, post ? 303 : 302)
  if (navigation.kind === 'page') {
    reply.header('content-security-policy', "default-src 'none'; frame-ancestors 'none'")
    const page = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(navigation.title)}</title></head><body><p>${escapeHtml(navigation.text)}</p></body></html>`
    return reply.type('text/html; charset=utf-8').send(page)
  }
  // OAuth 2.0 Form Post Response Mode §2: a page that posts the response to the client at once.
  const nonce = randomToken(16)
  reply.header('content-security-policy', `default-src 'none'; script-src 'nonce-${nonce}'; frame-ancestors 'none'`)
  const inputs = Object.entries(navigation.fields).map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
  const page = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Signing in</title></head><body><form method="post" action="${escapeHtml(navigation.action)}">${inputs.join('')}<noscript><button type="submit">Continue</button></noscript></form><script nonce="${nonce}">document.forms[0].submit()</script></body></html>`
  return reply.type('text/html; charset=utf-8').send(page)
}

/**
 * An error that can't go to the client: to the account's error page if it has one, else a plain answer. Nothing
 * from the request is echoed, so the page can't be used to show an attacker's text.
 */
function sendUntrusted(reply: FastifyReply, settings: AccountSettings | undefined, error: UntrustedRequestError, post: boolean): FastifyReply {
  if (settings?.error_url) return reply.redirect(withQuery(settings.error_url, { error: error.code, error_description: error.description }), post ? 303 : 302)
  return reply.status(400).type('text/plain; charset=utf-8').send(`${error.code}: ${error.description}\n`)
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char]!)
}
