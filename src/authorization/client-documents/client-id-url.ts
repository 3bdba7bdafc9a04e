/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document-00): a client_id that is a URL names a
 * JSON document of the client's metadata. What such a client_id may look like (§3).
 */

/** Whether a client_id is the URL of a metadata document rather than one of Herald's own `cli_` ids. */
export function isDocumentClientId(clientId: string): boolean {
  return clientId.startsWith('https://') || clientId.startsWith('http://')
}

const MAX_LENGTH = 2048

/**
 * Why `clientId` can't name a metadata document, or undefined when it can (§3): https, a path, no dot segments, no
 * fragment, no credentials. `allowHttp` is the development and test policy of outbound requests
 * (HERALD_WEBHOOK_ALLOW_HTTP), under which plain http is accepted too. The URL must be written as WHATWG URL
 * normalizes it, so that one document is one client: the draft compares client_ids as strings (§4.1).
 */
export function clientIdUrlProblem(clientId: string, allowHttp: boolean): string | undefined {
  if (clientId.length > MAX_LENGTH) return `must be at most ${MAX_LENGTH} characters`
  let url: URL
  try {
    url = new URL(clientId)
  } catch {
    return 'must be an absolute URL'
  }
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) return 'must use https'
  if (clientId.includes('#')) return 'must not contain a fragment'
  if (url.username !== '' || url.password !== '' || clientId.slice(0, clientId.indexOf('/', url.protocol.length + 2)).includes('@')) {
    return 'must not contain a username or password'
  }
  const rawPath = clientId.slice(url.origin.length).split('?', 1)[0] ?? ''
  if (rawPath.split('/').some(isDotSegment)) return 'must not contain . or .. path segments'
  if (url.pathname === '/' || url.pathname === '') return 'must contain a path'
  if (url.href !== clientId) return `must be written in normal form (${url.href})`
  return undefined
}

/** RFC 3986 §3.3's dot segments, percent-encoded or not. */
function isDotSegment(segment: string): boolean {
  return /^(\.|%2e){1,2}$/i.test(segment)
}
