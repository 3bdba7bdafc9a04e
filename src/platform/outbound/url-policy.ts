import { lookup } from 'node:dns/promises'
import { type BlockReason, type Cidr, isAllowedAddress, parseHostLiteral } from './addresses.js'

/** Where Herald may send requests for an account: webhook endpoints, a client's `jwks_uri`. */
export interface OutboundUrlPolicy {
  /** `HERALD_WEBHOOK_ALLOW_HTTP`: plain http is accepted (development only). */
  allowHttp: boolean
  allowedCidrs: readonly Cidr[]
}

const MAX_URL_LENGTH = 2048
const RESOLVE_TIMEOUT_MS = 5000

/**
 * Why `text` can't be the URL of an outbound request (a webhook endpoint, a client's `jwks_uri`), or undefined when
 * it can. Literal addresses and names that resolve to a non-public address are refused up front, so the mistake
 * shows at once rather than as failed requests; every request still vets the address it connects to, because DNS
 * answers change. A name that does not resolve now is accepted: it may be set up later, and its requests fail
 * (`dns`) until it is.
 */
export async function outboundUrlProblem(text: string, policy: OutboundUrlPolicy): Promise<string | undefined> {
  if (text.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`
  // WHATWG URL parsing drops surrounding spaces and control characters and tabs and newlines anywhere, so such a
  // URL would be stored as given but requested as something else (and a NUL is storable on SQLite only).
  if ([...text].some((char) => char <= ' ' || char === '\u007f')) return 'must not contain spaces or control characters'
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return 'must be an absolute URL'
  }
  if (url.protocol !== 'https:' && !(policy.allowHttp && url.protocol === 'http:')) {
    return policy.allowHttp ? 'must use https or http' : 'must use https'
  }
  // WHATWG URL forgets an empty userinfo (`https://@host`) or fragment (`…/hook#`), reads `https:///host` as
  // `https://host`, and a backslash anywhere as a slash: refused as written, so the URL stored is the one requested.
  if (text.includes('\\')) return 'must not contain backslashes'
  if (!/^https?:\/\/[^/]/i.test(text)) return 'must start with the scheme, then // and the host'
  const authority = text.slice(text.indexOf('//') + 2).split(/[/?#]/, 1)[0] ?? ''
  if (authority.includes('@')) return 'must not contain credentials'
  if (text.includes('#')) return 'must not contain a fragment'
  // WHATWG URL has already turned `2130706433`, `0x7f.1` and `0` into dotted quads.
  const literal = parseHostLiteral(url.hostname)
  const addresses = literal ? [literal.address] : await resolve(url.hostname)
  for (const address of addresses) {
    const verdict = isAllowedAddress(address, policy.allowedCidrs)
    if (!verdict.allowed) {
      const kind = verdict.reason.replace(/_/g, '-')
      return `must not point at ${VOWEL_SOUNDING.has(verdict.reason) ? 'an' : 'a'} ${kind} address (${literal ? address : `${url.hostname} is ${address}`})`
    }
  }
  return undefined
}

/** The reasons spoken with a vowel first ('an invalid'), which the letter alone misjudges ('a unique-local'). */
const VOWEL_SOUNDING: ReadonlySet<BlockReason> = new Set(['invalid', 'unspecified'])

async function resolve(hostname: string): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('resolution timed out')), RESOLVE_TIMEOUT_MS)
  })
  try {
    const answers = await Promise.race([lookup(hostname, { all: true, verbatim: true }), timeout])
    return answers.map((answer) => answer.address)
  } catch {
    return []
  } finally {
    clearTimeout(timer)
  }
}
