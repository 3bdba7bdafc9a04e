import type { SeededRandom } from './seeded-random.js'
import { PKCE_CHALLENGE } from './sign-in.js'

export interface FuzzClient {
  label: string
  id: string
  secret: string | null
  authMethod: 'client_secret_basic' | 'client_secret_post' | 'none'
  native: boolean
  skipConsent: boolean
  redirectUris: readonly string[]
}

export interface FuzzCase {
  index: number
  /** The parameters in order, repeats kept; PAR sends them with the client's authentication instead of client_id. */
  params: Array<[string, string]>
  /** Raw text appended to the encoded parameters: what no encoder would produce. */
  garbage: string
  /** The client the request names: one of the account's, or an unknown, deleted or other account's id. */
  clientId: string
  client: FuzzClient | undefined
  /** PAR authenticates with the client's real secret, or a wrong one. */
  rightCredentials: boolean
  /** The only redirect_uri an answer may send the browser to (RFC 9700 §4.1.3); undefined when none is trusted. */
  trustedAtAuthorize: string | undefined
  trustedAtPar: string | undefined
}

/**
 * Whether `client` may use `uri`, as RFC 9700 §2.1 and RFC 8252 §7.3 and §8.3 read, written apart from Herald's
 * code: exactly a registered URI, or for a native app the same loopback IP URI with any port in 1–65535.
 */
export function mayRedirectTo(client: FuzzClient, uri: string): boolean {
  if (client.redirectUris.includes(uri)) return true
  if (!client.native) return false
  const presented = loopbackParts(uri)
  if (!presented || (presented.port !== undefined && !(/^\d{1,5}$/.test(presented.port) && Number(presented.port) >= 1 && Number(presented.port) <= 65535))) return false
  return client.redirectUris.some((registered) => {
    const parts = loopbackParts(registered)
    return parts !== undefined && parts.host === presented.host && parts.rest === presented.rest
  })
}

function loopbackParts(uri: string): { host: string; port: string | undefined; rest: string } | undefined {
  const match = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::([^/?#]*))?([/?#].*)?$/.exec(uri)
  return match ? { host: match[1]!, port: match[2], rest: match[3] ?? '' } : undefined
}

const PORTS = ['1', '65535', '53127', '0', '65536', '99999', '-1', 'abc', '', '00080', '8o8o']
const HOSTS = ['127.0.0.1', '[::1]', 'localhost', 'LOCALHOST', '127.1', '[::ffff:127.0.0.1]', 'rp.example']

/** A redirect_uri around `base`, one of the client's own (or a stranger's) URIs, most often `base` itself; undefined leaves it out. */
function redirectUri(rng: SeededRandom, base: string, odd: number): string | undefined {
  if (!rng.chance(odd)) return base
  const authority = /^([a-z.+-]+:\/\/)(\[[^\]]*\]|[^/?#:]*)(?::([^/?#]*))?([/?#].*)?$/i.exec(base)
  const [, scheme = 'http://', host = '127.0.0.1', port, rest = '/'] = authority ?? []
  switch (rng.int(13)) {
    case 0:
      return `${scheme}${host}:${rng.pick(PORTS)}${rest}`
    case 1:
      return `${scheme}${rng.pick(HOSTS)}${port === undefined ? '' : `:${port}`}${rest}`
    case 2:
      return `${scheme}${rng.pick(['user:pass@', 'user@', ':@', '127.0.0.1@'])}${host}${port === undefined ? '' : `:${port}`}${rest}`
    case 3:
      return rng.pick(['https://*.rp.example/cb', 'https://rp.example*/cb', 'http://*/callback', 'https://%2A.rp.example/cb', 'http://127.0.0.*:9/callback'])
    case 4:
      return `${base}${rng.pick(['#x', '#', '/', '?x=1', '&x=1', '%00', '/../cb', ' '])}`
    case 5:
      return rng.pick(['https://evil.example/cb', 'https://rp.example.evil.example/cb', 'javascript:alert(1)', 'com.example.app:/cb', 'com.example.app:/other', '/relative', 'http://[::1/cb'])
    case 6:
      return `${base}?pad=${'a'.repeat(rng.pick([100, 2000, 2100, 5000]))}`
    case 7:
      return rng.chance(0.5) ? encodeURIComponent(base) : base.replace(/[a-z]/, (letter) => `%${letter.charCodeAt(0).toString(16)}`)
    case 8:
      return base.toUpperCase()
    case 9:
      return rng.pick(['', ' ', '\u0000', 'http://127.0.0.1:9\\callback', `\t${base}`])
    case 10:
    case 11:
      return `${scheme}${host}:${rng.pick(['1', '65535', '4000', '80'])}${rest}`
    default:
      return undefined
  }
}

const SCOPES = ['openid', 'openid profile', 'profile email', undefined, undefined]
const ODD_SCOPES = ['openid openid', '', ' ', 'unknown', 'openid nope', 'herald:clients:read', 'offline_access', 'openid\u0000', 'ö', 'openid  email']
const PROMPTS = [undefined, undefined, undefined, 'login', 'consent', 'login consent', 'select_account']
const ODD_PROMPTS = ['none', 'none login', 'none consent', 'unknown', 'consent select_account', '', 'none none', 'LOGIN', 'login login']
const MAX_AGES = ['0', '60', '-1', 'abc', '1e3', '999999999999', '', ' 5', '3600']
const ODD_TEXT = ['', ' ', '\u0000', 'ünï\u{1F600}', '<script>', '%', 'x'.repeat(2048), 'x'.repeat(2049), 'x'.repeat(4000), '"\'&=']
const ODD_RESPONSE_TYPES = ['token', 'id_token', 'code id_token', '', 'CODE', 'code ', undefined]
const GARBAGE = ['&%', '&%zz=1', '&=', '&&&', '&a[b]=1', '&__proto__=x', '&constructor=1', '&hasOwnProperty=1', '&%00=%00', '&%C3%28=%FF', '&scope[]=x', '&=%', '&%E2%82=1']

/**
 * One generated authorization request. `strangers` are client ids that are not the account's. Half the cases are
 * hostile throughout; the other half are valid but for a few odd parameters, so that many get as far as the login
 * app and past it.
 */
export function generateCase(rng: SeededRandom, index: number, clients: readonly FuzzClient[], strangers: readonly string[]): FuzzCase {
  const odd = rng.chance(0.5) ? 0.5 : 0.05
  const client = rng.chance(1 - odd * 0.3) ? rng.pick(clients) : undefined
  const clientId = client?.id ?? rng.pick(strangers)
  const base = rng.pick(client && client.redirectUris.length > 0 ? client.redirectUris : ['http://127.0.0.1:9/callback', 'https://rp.example/cb'])
  const params: Array<[string, string]> = []
  const add = (name: string, value: string | undefined) => {
    if (value !== undefined) params.push([name, value])
  }
  const either = <T>(usual: T, unusual: () => T): T => (rng.chance(odd) ? unusual() : usual)
  add('response_type', either('code', () => rng.pick(ODD_RESPONSE_TYPES)))
  add('client_id', either(clientId, () => (rng.chance(0.1) ? undefined : clientId)))
  add('redirect_uri', redirectUri(rng, base, odd))
  add('scope', either(rng.pick(SCOPES), () => rng.pick(ODD_SCOPES)))
  add('prompt', either(rng.pick(PROMPTS), () => rng.pick(ODD_PROMPTS)))
  add('max_age', either(undefined, () => rng.pick(MAX_AGES)))
  pkce(rng, odd, add)
  add('state', either(`s-${index}`, () => rng.pick([undefined, ...ODD_TEXT])))
  add('nonce', either(`n-${index}`, () => rng.pick([undefined, ...ODD_TEXT])))
  add('response_mode', either(rng.pick([undefined, undefined, 'query', 'form_post']), () => rng.pick(['fragment', 'bogus', ''])))
  if (rng.chance(odd * 0.3)) add(rng.pick(['login_hint', 'ui_locales', 'acr_values', 'id_token_hint', 'resource', 'request', 'registration', 'unknown_parameter']), rng.pick(ODD_TEXT))
  if (rng.chance(odd * 0.08)) add(rng.pick(['request_uri', 'login_verifier', 'consent_verifier']), rng.pick(['urn:ietf:params:oauth:request_uri:nope', 'x', '']))
  if (params.length > 0 && rng.chance(odd * 0.15)) {
    const [name, value] = rng.pick(params)
    params.push([name, rng.chance(0.5) ? value : `${value}x`])
  }
  const garbage = rng.chance(odd * 0.12) ? rng.pick(GARBAGE) : ''

  const values = (name: string) => params.filter(([key]) => key === name).map(([, value]) => value)
  const [presented, ...extra] = values('redirect_uri')
  // A verifier or request_uri (even a repeated empty one) takes authorize off the path that reads redirect_uri.
  const detour = ['request_uri', 'login_verifier', 'consent_verifier'].some((name) => values(name).length > 1 || values(name).some((value) => value !== ''))
  const redirect = client && presented !== undefined && presented !== '' && extra.length === 0 && mayRedirectTo(client, presented) ? presented : undefined
  // A public client has no credentials to get wrong.
  const rightCredentials = !rng.chance(odd * 0.15) || client?.authMethod === 'none'
  const namedOnce = values('client_id').length === 1 && values('client_id')[0] === clientId
  return {
    index,
    params,
    garbage,
    clientId,
    client,
    rightCredentials,
    trustedAtAuthorize: namedOnce && !detour ? redirect : undefined,
    trustedAtPar: rightCredentials && values('request_uri').length === 0 ? redirect : undefined,
  }
}

function pkce(rng: SeededRandom, odd: number, add: (name: string, value: string | undefined) => void): void {
  const pick = rng.chance(odd) ? 6 + rng.int(4) : 0
  if (pick < 6) {
    add('code_challenge', PKCE_CHALLENGE)
    add('code_challenge_method', 'S256')
  } else if (pick === 6) add('code_challenge', PKCE_CHALLENGE)
  else if (pick === 7) {
    add('code_challenge', rng.pick([PKCE_CHALLENGE.slice(1), `${PKCE_CHALLENGE}=`, 'a'.repeat(128), '']))
    add('code_challenge_method', rng.pick(['S256', 'plain', 's256', '']))
  } else if (pick === 8) add('code_challenge_method', 'S256')
}
