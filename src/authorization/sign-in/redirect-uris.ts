/** A loopback http URI's scheme and host, and its port if any (RFC 8252 §7.3). */
const LOOPBACK_AUTHORITY = /^(http:\/\/(?:127\.0\.0\.1|\[::1\]|localhost))(?::\d{1,5})?(?=[/?]|$)/

/**
 * Whether a presented redirect_uri is the registered one: the same string, character for character (RFC 9700
 * §4.1.3), except that a loopback URI's port may differ, since a native app listens on whatever port it gets
 * (RFC 8252 §7.3).
 */
export function redirectUriMatches(registered: string, presented: string): boolean {
  if (registered === presented) return true
  const registeredLoopback = LOOPBACK_AUTHORITY.exec(registered)
  const presentedLoopback = LOOPBACK_AUTHORITY.exec(presented)
  if (!registeredLoopback || !presentedLoopback) return false
  return withoutPort(registered, registeredLoopback) === withoutPort(presented, presentedLoopback)
}

function withoutPort(uri: string, authority: RegExpExecArray): string {
  return `${authority[1]}${uri.slice(authority[0].length)}`
}
