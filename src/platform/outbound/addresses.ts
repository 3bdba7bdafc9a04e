// Address vetting for outbound requests: which IP addresses Herald may connect to on behalf of
// an account (webhook endpoints, client jwks_uri, back-channel logout). Pure functions, no I/O.
import { isIP } from 'node:net'

export type IpFamily = 4 | 6

export interface Cidr {
  readonly family: IpFamily
  /** Network address bytes (4 or 16), host bits zero. */
  readonly network: Uint8Array
  readonly prefixLength: number
}

/** Why an address is not publicly routable. Closed so that stored attempt records stay queryable. */
export type BlockReason =
  | 'invalid'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'carrier_grade_nat'
  | 'link_local'
  | 'unique_local'
  | 'documentation'
  | 'benchmarking'
  | 'multicast'
  | 'broadcast'
  | 'reserved'

export type AddressClass = 'public' | BlockReason

export type AddressVerdict = { allowed: true } | { allowed: false; reason: BlockReason }

export interface IpLiteral {
  readonly address: string
  readonly family: IpFamily
}

interface ParsedAddress {
  family: IpFamily
  bytes: Uint8Array
}

export function parseCidr(text: string): Cidr {
  const trimmed = text.trim()
  const slash = trimmed.indexOf('/')
  const addressText = slash === -1 ? trimmed : trimmed.slice(0, slash)
  // Zones name an interface of this host; they have no meaning in a configured network range.
  const parsed = addressText.includes('%') ? null : parseAddress(addressText)
  if (parsed === null) {
    throw new Error(`Invalid CIDR "${text}": "${addressText}" is not an IPv4 or IPv6 address`)
  }
  const maxPrefix = parsed.bytes.length * 8
  let prefixLength = maxPrefix
  if (slash !== -1) {
    const prefixText = trimmed.slice(slash + 1)
    if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > maxPrefix) {
      throw new Error(`Invalid CIDR "${text}": prefix length must be an integer from 0 to ${maxPrefix}`)
    }
    prefixLength = Number(prefixText)
  }
  const network = maskBytes(parsed.bytes, prefixLength)
  // A range written with host bits set usually means a typo; refusing it beats guessing which was meant.
  if (!bytesEqual(network, parsed.bytes)) {
    throw new Error(
      `Invalid CIDR "${text}": host bits are set; did you mean ${formatAddress(parsed.family, network)}/${prefixLength}?`,
    )
  }
  return { family: parsed.family, network, prefixLength }
}

export function parseCidrList(text: string): Cidr[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')
    .map(parseCidr)
}

export function cidrContains(cidr: Cidr, address: string): boolean {
  const parsed = parseAddress(stripZone(address))
  if (parsed === null) return false
  let bytes = parsed.bytes
  // An IPv4-mapped IPv6 address is the same IPv4 host on a dual-stack socket, so an IPv4 range covers it.
  if (parsed.family === 6 && cidr.family === 4) {
    if (!prefixMatches(IPV4_MAPPED.network, bytes, IPV4_MAPPED.prefixLength)) return false
    bytes = bytes.subarray(12)
  } else if (parsed.family !== cidr.family) {
    return false
  }
  return prefixMatches(cidr.network, bytes, cidr.prefixLength)
}

/**
 * Classifies an address as DNS resolution or `net.isIP` gives it (canonical text). Anything that is not an
 * IP address is 'invalid', so a caller that only allows 'public' fails closed.
 */
export function classifyAddress(address: string): AddressClass {
  const parsed = parseAddress(stripZone(address))
  if (parsed === null) return 'invalid'
  return parsed.family === 4 ? classifyIpv4(parsed.bytes) : classifyIpv6(parsed.bytes)
}

export function isAllowedAddress(address: string, allowedCidrs: readonly Cidr[]): AddressVerdict {
  const verdict = classifyAddress(address)
  if (verdict === 'public') return { allowed: true }
  if (verdict !== 'invalid' && allowedCidrs.some((cidr) => cidrContains(cidr, address))) return { allowed: true }
  return { allowed: false, reason: verdict }
}

/**
 * Recognises a URL hostname that is an IP literal. Relies on WHATWG `URL` having already rewritten the
 * legacy spellings (`2130706433`, `0x7f.1`, `0177.0.0.1`, `0`) to dotted-quad and compressed IPv6 text,
 * so anything else is a name for DNS.
 */
export function parseHostLiteral(hostname: string): IpLiteral | null {
  const unbracketed = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname
  const family = isIP(unbracketed)
  if (family === 4 || family === 6) return { address: unbracketed, family }
  return null
}

// --- IANA special-purpose address registries -------------------------------------------------------------
// First match wins, so specific entries precede the blocks that contain them. Sources:
// https://www.iana.org/assignments/iana-ipv4-special-registry and .../iana-ipv6-special-registry.

type Rule = { cidr: Cidr; verdict: AddressClass } | { cidr: Cidr; embeddedIpv4At: number }

const rule = (cidr: string, verdict: AddressClass): Rule => ({ cidr: parseCidr(cidr), verdict })
const embedded = (cidr: string, embeddedIpv4At: number): Rule => ({ cidr: parseCidr(cidr), embeddedIpv4At })

const IPV4_RULES: readonly Rule[] = [
  // Linux routes connections to 0.0.0.0 to the local host, so "this network" is as dangerous as loopback.
  rule('0.0.0.0/8', 'unspecified'),
  rule('10.0.0.0/8', 'private'),
  rule('100.64.0.0/10', 'carrier_grade_nat'),
  rule('127.0.0.0/8', 'loopback'),
  // Includes 169.254.169.254, the cloud instance-metadata endpoint.
  rule('169.254.0.0/16', 'link_local'),
  rule('172.16.0.0/12', 'private'),
  // IETF protocol assignments. Two of its /32s (PCP and TURN anycast) are globally reachable, but no
  // legitimate webhook or JWKS lives there, so the whole block is refused.
  rule('192.0.0.0/24', 'reserved'),
  rule('192.0.2.0/24', 'documentation'),
  // Deprecated 6to4 relay anycast (RFC 7526).
  rule('192.88.99.0/24', 'reserved'),
  rule('192.168.0.0/16', 'private'),
  rule('198.18.0.0/15', 'benchmarking'),
  rule('198.51.100.0/24', 'documentation'),
  rule('203.0.113.0/24', 'documentation'),
  rule('224.0.0.0/4', 'multicast'),
  rule('255.255.255.255/32', 'broadcast'),
  rule('240.0.0.0/4', 'reserved'),
]

const IPV4_MAPPED = parseCidr('::ffff:0:0/96')
const GLOBAL_UNICAST = parseCidr('2000::/3')

const IPV6_RULES: readonly Rule[] = [
  rule('::/128', 'unspecified'),
  rule('::1/128', 'loopback'),
  // Mapped and NAT64 addresses reach the embedded IPv4 host, so they are judged as that host.
  embedded('::ffff:0:0/96', 12),
  embedded('64:ff9b::/96', 12),
  rule('64:ff9b:1::/48', 'private'),
  rule('100::/64', 'reserved'),
  rule('100:0:0:1::/64', 'reserved'),
  // Inside 2001::/23 only these are marked globally reachable: PCP, TURN and DNS-SD anycast, AMT,
  // AS112-v6, ORCHIDv2 and drone remote ID.
  rule('2001:1::1/128', 'public'),
  rule('2001:1::2/128', 'public'),
  rule('2001:1::3/128', 'public'),
  rule('2001:2::/48', 'benchmarking'),
  rule('2001:3::/32', 'public'),
  rule('2001:4:112::/48', 'public'),
  rule('2001:20::/28', 'public'),
  rule('2001:30::/28', 'public'),
  // The rest, including Teredo (2001::/32), which tunnels to IPv4 hosts we cannot vet.
  rule('2001::/23', 'reserved'),
  rule('2001:db8::/32', 'documentation'),
  // 6to4 addresses carry the IPv4 address of the tunnel endpoint in bits 16-47.
  embedded('2002::/16', 2),
  rule('3fff::/20', 'documentation'),
  rule('5f00::/16', 'reserved'),
  rule('fc00::/7', 'unique_local'),
  rule('fe80::/10', 'link_local'),
  rule('ff00::/8', 'multicast'),
]

function classifyIpv4(bytes: Uint8Array): AddressClass {
  return matchRules(IPV4_RULES, bytes) ?? 'public'
}

function classifyIpv6(bytes: Uint8Array): AddressClass {
  const matched = matchRules(IPV6_RULES, bytes)
  if (matched !== null) return matched
  // Outside 2000::/3 nothing is allocated for global unicast (IPv4-compatible ::/96, deprecated site-local
  // fec0::/10, ...), so it is refused rather than trusted.
  return prefixMatches(GLOBAL_UNICAST.network, bytes, GLOBAL_UNICAST.prefixLength) ? 'public' : 'reserved'
}

function matchRules(rules: readonly Rule[], bytes: Uint8Array): AddressClass | null {
  for (const entry of rules) {
    if (!prefixMatches(entry.cidr.network, bytes, entry.cidr.prefixLength)) continue
    if ('verdict' in entry) return entry.verdict
    return classifyIpv4(bytes.subarray(entry.embeddedIpv4At, entry.embeddedIpv4At + 4))
  }
  return null
}

// --- byte-level helpers --------------------------------------------------------------------------------

function stripZone(address: string): string {
  const percent = address.indexOf('%')
  return percent === -1 ? address : address.slice(0, percent)
}

function parseAddress(text: string): ParsedAddress | null {
  // isIP is the gatekeeper for syntax (it rejects octal-looking and otherwise ambiguous text); the parsers
  // below only convert text it accepted.
  const family = isIP(text)
  if (family === 4) return { family, bytes: ipv4Bytes(text) }
  if (family === 6 && !text.includes('%')) return { family, bytes: ipv6Bytes(text) }
  return null
}

function ipv4Bytes(text: string): Uint8Array {
  return Uint8Array.from(text.split('.'), Number)
}

function ipv6Bytes(text: string): Uint8Array {
  let hex = text
  const lastColon = hex.lastIndexOf(':')
  const tail = hex.slice(lastColon + 1)
  if (tail.includes('.')) {
    const [a = 0, b = 0, c = 0, d = 0] = ipv4Bytes(tail)
    hex = `${hex.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const halves = hex.split('::')
  const groupsOf = (part: string | undefined): string[] => (part ? part.split(':') : [])
  const head = groupsOf(halves[0])
  const rest = groupsOf(halves[1])
  const groups = halves.length === 2 ? [...head, ...Array<string>(8 - head.length - rest.length).fill('0'), ...rest] : head
  const bytes = new Uint8Array(16)
  groups.forEach((group, index) => {
    const value = parseInt(group, 16)
    bytes[index * 2] = value >> 8
    bytes[index * 2 + 1] = value & 0xff
  })
  return bytes
}

function prefixMatches(network: Uint8Array, bytes: Uint8Array, prefixLength: number): boolean {
  if (network.length !== bytes.length) return false
  const fullBytes = prefixLength >> 3
  for (let i = 0; i < fullBytes; i++) {
    if (network[i] !== bytes[i]) return false
  }
  const remainingBits = prefixLength & 7
  if (remainingBits === 0) return true
  const mask = (0xff << (8 - remainingBits)) & 0xff
  return ((network[fullBytes] ?? 0) & mask) === ((bytes[fullBytes] ?? 0) & mask)
}

function maskBytes(bytes: Uint8Array, prefixLength: number): Uint8Array {
  return bytes.map((byte, index) => {
    const bitsInByte = Math.min(8, Math.max(0, prefixLength - index * 8))
    return byte & ((0xff << (8 - bitsInByte)) & 0xff)
  })
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index])
}

function formatAddress(family: IpFamily, bytes: Uint8Array): string {
  if (family === 4) return Array.from(bytes).join('.')
  const groups: string[] = []
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16))
  // Good enough for an error message; no need to compress the longest zero run.
  return groups.join(':')
}
