// The only way Herald should reach a URL an account gave it. The agent resolves names itself, refuses
// if any resolved address is non-public (unless allow-listed), and connects to the vetted address, so a
// second resolution (DNS rebinding) can't swap in an internal host between the check and the connect.
import { lookup as dnsLookup } from 'node:dns'
import type { LookupFunction } from 'node:net'
import { Agent, buildConnector, errors as undiciErrors } from 'undici'
import { isAllowedAddress, parseHostLiteral, type BlockReason, type Cidr } from './addresses.js'

export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000

export interface GuardedAgentOptions {
  /** Non-public ranges the operator explicitly allows (HERALD_WEBHOOK_ALLOWED_CIDRS). */
  allowedCidrs: readonly Cidr[]
  /** Bounds name resolution and each TCP/TLS connection attempt. */
  connectTimeoutMs?: number
  /** Resolver, called with `{ all: true }`; defaults to `dns.lookup` (getaddrinfo, honours /etc/hosts). */
  lookup?: LookupFunction
  /** Maximum sockets per origin; unlimited by default. */
  connections?: number
}

export class BlockedAddressError extends Error {
  readonly code = 'HERALD_BLOCKED_ADDRESS'

  constructor(
    readonly hostname: string,
    readonly address: string,
    readonly reason: BlockReason,
  ) {
    const resolved = hostname === address ? '' : ` (resolved to ${address})`
    super(`Refusing to connect to ${hostname}${resolved}: ${reason.replace(/_/g, '-')} address`)
    this.name = 'BlockedAddressError'
  }
}

export type NetworkErrorClass =
  | 'timeout'
  | 'refused'
  | 'dns'
  | 'tls'
  | 'blocked_address'
  | 'reset'
  | 'response_too_large'
  | 'network'

export function createGuardedAgent(options: GuardedAgentOptions): Agent {
  const timeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS
  const lookup: LookupFunction = options.lookup ?? dnsLookup
  const connectAddress = buildConnector({ timeout: timeoutMs })

  const connect: buildConnector.connector = (connectOptions, callback) => {
    const { hostname } = connectOptions
    const literal = parseHostLiteral(hostname)
    const addresses = literal ? Promise.resolve([literal.address]) : resolveAll(lookup, hostname, timeoutMs)
    addresses.then(
      (resolved) => {
        const blocked = findBlocked(hostname, resolved, options.allowedCidrs)
        if (blocked) return callback(blocked, null)
        // SNI and certificate checks must use the name the account configured, not the address.
        const servername = connectOptions.servername || (literal ? undefined : hostname)
        connectInOrder(connectAddress, { ...connectOptions, servername }, resolved, callback)
      },
      (error: unknown) => callback(toError(error), null),
    )
  }

  return new Agent({ connect, ...(options.connections === undefined ? {} : { connections: options.connections }) })
}

function resolveAll(lookup: LookupFunction, hostname: string, timeoutMs: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    // getaddrinfo can't be cancelled, but the connect attempt must not outlive its timeout.
    const timer = setTimeout(
      () => reject(new undiciErrors.ConnectTimeoutError(`Connect Timeout Error (resolving ${hostname})`)),
      timeoutMs,
    )
    lookup(hostname, { all: true }, (error, result) => {
      clearTimeout(timer)
      if (error) return reject(error)
      const addresses = typeof result === 'string' ? [result] : result.map((entry) => entry.address)
      if (addresses.length === 0) {
        return reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname }))
      }
      resolve(addresses)
    })
  })
}

// Every address is vetted, not just the one we would try first: a name that answers with one public and
// one internal address is a rebinding setup, and later connections or retries could land on either.
function findBlocked(
  hostname: string,
  addresses: readonly string[],
  allowedCidrs: readonly Cidr[],
): BlockedAddressError | null {
  for (const address of addresses) {
    const verdict = isAllowedAddress(address, allowedCidrs)
    if (!verdict.allowed) return new BlockedAddressError(hostname, address, verdict.reason)
  }
  return null
}

// Errors that say "this address is unusable from here", where trying the name's next address may work
// (typically an AAAA record on a host without IPv6 routing).
const NEXT_ADDRESS_CODES = new Set(['ECONNREFUSED', 'ENETUNREACH', 'EHOSTUNREACH', 'EADDRNOTAVAIL', 'EAFNOSUPPORT'])

function connectInOrder(
  connectAddress: buildConnector.connector,
  connectOptions: buildConnector.Options,
  addresses: readonly string[],
  callback: buildConnector.Callback,
): void {
  const attempt = (index: number): void => {
    const address = addresses[index]
    if (address === undefined) return callback(new Error('No address to connect to'), null)
    try {
      connectAddress({ ...connectOptions, hostname: address }, (error, socket) => {
        if (error && index + 1 < addresses.length && NEXT_ADDRESS_CODES.has(errorCode(error) ?? '')) {
          return attempt(index + 1)
        }
        if (error) return callback(error, null)
        callback(null, socket)
      })
    } catch (error) {
      // net/tls throw synchronously on invalid options; undici expects the callback either way.
      callback(toError(error), null)
    }
  }
  attempt(0)
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT'])
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME'])
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET'])
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'HOSTNAME_MISMATCH',
  // OpenSSL handshake failures, e.g. speaking TLS to a plain-HTTP port ("wrong version number").
  'EPROTO',
])

/**
 * Maps an outbound failure to the class recorded on a delivery attempt. undici and Node wrap errors
 * (a fetch TypeError around a socket error, an AggregateError of per-address attempts), so the whole
 * `cause` chain is inspected; a blocked address anywhere in it wins, otherwise the outermost recognised
 * error decides.
 */
export function classifyNetworkError(error: unknown): NetworkErrorClass {
  const chain = errorChain(error)
  if (chain.some((entry) => errorCode(entry) === 'HERALD_BLOCKED_ADDRESS')) return 'blocked_address'
  for (const entry of chain) {
    const known = classifyOne(entry)
    if (known !== null) return known
  }
  return 'network'
}

function classifyOne(error: object): NetworkErrorClass | null {
  const code = errorCode(error)
  const name = 'name' in error ? error.name : undefined
  if (name === 'TimeoutError' || name === 'AbortError' || (code !== undefined && TIMEOUT_CODES.has(code))) {
    return 'timeout'
  }
  if (code === undefined) return null
  if (code === 'ECONNREFUSED') return 'refused'
  if (DNS_CODES.has(code)) return 'dns'
  if (RESET_CODES.has(code)) return 'reset'
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return 'response_too_large'
  if (TLS_CODES.has(code) || code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_') || code.startsWith('CERT_')) {
    return 'tls'
  }
  return null
}

function errorChain(error: unknown): object[] {
  const chain: object[] = []
  const pending: unknown[] = [error]
  // Bounded so a self-referencing cause can't loop forever.
  while (pending.length > 0 && chain.length < 16) {
    const next = pending.shift()
    if (typeof next !== 'object' || next === null || chain.includes(next)) continue
    chain.push(next)
    if ('cause' in next) pending.push(next.cause)
    if (next instanceof AggregateError) pending.push(...(next.errors as unknown[]))
  }
  return chain
}

function errorCode(error: object): string | undefined {
  // DOMException has a numeric legacy `code`; only string codes are Node/undici error codes.
  return 'code' in error && typeof error.code === 'string' ? error.code : undefined
}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error))
}
