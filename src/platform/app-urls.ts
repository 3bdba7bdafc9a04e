/** Hosts that name the machine itself: plain http to them never crosses a network (RFC 8252 §7.3, §8.3). */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', '[::1]', 'localhost'])

/** Whether `url` is plain http to a loopback host. */
export function isLoopbackHttp(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)
}

/**
 * Why `value` can't be the address of one of the account's own pages (its login, consent, logout or error page), or
 * undefined when it can: an absolute https URL without a fragment, or http on loopback for development.
 */
export function appUrlProblem(value: string): string | undefined {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return 'must be an absolute URL'
  }
  if (value.includes('#')) return 'must not contain a fragment'
  if ([...value].some((char) => char <= ' ')) return 'must not contain spaces or control characters'
  if (url.protocol === 'https:' || isLoopbackHttp(url)) return undefined
  return 'must be an https URL (plain http only on 127.0.0.1, [::1] or localhost)'
}
