/**
 * A loopback IP literal's http URI: its scheme and host, and its port if any. Only these may vary the port, and only
 * for a native app (RFC 8252 §7.3); `localhost` is not one of them (RFC 8252 §8.3).
 */
const LOOPBACK_IP_AUTHORITY = /^(http:\/\/(?:127\.0\.0\.1|\[::1\]))(?::(\d+))?(?=[/?]|$)/

const WEB_SCHEMES: ReadonlySet<string> = new Set(['http:', 'https:'])

/** The port an absolute URI's authority spells out, if any, before the URL parser rejects or normalizes it. */
const WRITTEN_PORT = /^[a-z][a-z\d+.-]*:\/\/(?:[^/?#@]*@)?(?:\[[^\]/?#]*\]|[^/?#:@[\]]*):([^/?#@]*)(?=[/?#]|$)/i

/**
 * Why a redirect URI can't be one wherever it is registered or presented, or undefined: it is absolute, its port (if
 * it names one) is 1–65535 (port 0 is reserved, RFC 6335 §6), it carries no credentials (deprecated by RFC 3986
 * §3.2.1) and no wildcard in its host (RFC 9700 §4.1.3: redirect URIs match exactly, never by pattern).
 */
export function redirectUriSyntaxProblem(uri: string): string | undefined {
  const port = WRITTEN_PORT.exec(uri)?.[1]
  if (port !== undefined && port !== '' && !isPort(port)) return 'must have a port between 1 and 65535'
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return 'must be an absolute URI'
  }
  // The URL parser also reads `http:host/cb` and `http:\\host\cb` as `http://host/cb`: a web URI must be written
  // the one way it is compared, character for character.
  if (WEB_SCHEMES.has(url.protocol) && !uri.toLowerCase().startsWith(`${url.protocol}//`)) return 'must be written scheme://host'
  if (url.port === '0') return 'must have a port between 1 and 65535'
  if (url.username !== '' || url.password !== '') return 'must not contain credentials (user:password@)'
  if (url.hostname.includes('*')) return 'must not contain a wildcard (*) in its host'
  return undefined
}

/**
 * Whether a presented redirect_uri is the registered one: the same string, character for character (RFC 9700
 * §4.1.3), except that a native app's loopback IP URI may name another port, since the app listens on whatever port
 * it gets (RFC 8252 §7.3). A web client's loopback URI matches exactly (RFC 9700 §2.1).
 */
export function redirectUriMatches(registered: string, presented: string, native: boolean): boolean {
  if (registered === presented) return true
  if (!native) return false
  const registeredLoopback = LOOPBACK_IP_AUTHORITY.exec(registered)
  const presentedLoopback = LOOPBACK_IP_AUTHORITY.exec(presented)
  if (!registeredLoopback || !presentedLoopback) return false
  const presentedPort = presentedLoopback[2]
  if (presentedPort !== undefined && !isPort(presentedPort)) return false
  return withoutPort(registered, registeredLoopback) === withoutPort(presented, presentedLoopback)
}

function isPort(digits: string): boolean {
  if (!/^\d{1,5}$/.test(digits)) return false
  const port = Number(digits)
  return port >= 1 && port <= 65535
}

function withoutPort(uri: string, authority: RegExpExecArray): string {
  return `${authority[1]}${uri.slice(authority[0].length)}`
}
