// Address vetting for outbound requests: which IP addresses Herald may connect to on behalf of
// an account (webhook endpoints, client jwks_uri, back-channel logout). Pure functions, no I/O.
// ipaddr.js parses, masks and matches; the tables below say what each special-purpose range is.
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

export type IpFamily = 4 | 6

export interface Cidr {
  readonly family: IpFamily
  /** Network address bytes (4 or 16), host bits zero. */
  readonly network: readonly number[]
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

type IpAddress = ipaddr.IPv4 | ipaddr.IPv6

export function parseCidr(text: string): Cidr {
  const trimmed = text.trim()
  const slash = trimmed.indexOf('/')
  const addressText = slash === -1 ? trimmed : trimmed.slice(0, slash)
  // Zones name an interface of this host; they have no meaning in a configured network range.
  const address = addressText.includes('%') ? null : parseAddress(addressText)
  if (address === null) {
    throw new Error(`Invalid CIDR "${text}": "${addressText}" is not an IPv4 or IPv6 address`)
  }
  const kind = address instanceof ipaddr.IPv4 ? ipaddr.IPv4 : ipaddr.IPv6
  const maxPrefix = address.toByteArray().length * 8
  let prefixLength = maxPrefix
  if (slash !== -1) {
    const prefixText = trimmed.slice(slash + 1)
    if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > maxPrefix) {
      throw new Error(`Invalid CIDR "${text}": prefix length must be an integer from 0 to ${maxPrefix}`)
    }
    prefixLength = Number(prefixText)
  }
  const network = kind.networkAddressFromCIDR(`${address.toNormalizedString()}/${prefixLength}`)
  // A range written with host bits set usually means a typo; refusing it beats guessing which was meant.
  if (network.toNormalizedString() !== address.toNormalizedString()) {
    throw new Error(`Invalid CIDR "${text}": host bits are set; did you mean ${network.toNormalizedString()}/${prefixLength}?`)
  }
  return { family: familyOf(address), network: network.toByteArray(), prefixLength }
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
  // An IPv4-mapped IPv6 address is the same IPv4 host on a dual-stack socket, so an IPv4 range covers it.
  const host = parsed instanceof ipaddr.IPv6 && cidr.family === 4 && parsed.isIPv4MappedAddress() ? parsed.toIPv4Address() : parsed
  const network = ipaddr.fromByteArray([...cidr.network])
  return host.kind() === network.kind() && host.match(network, cidr.prefixLength)
}

/**
 * Classifies an address as DNS resolution or `net.isIP` gives it (canonical text). Anything that is not an
 * IP address is 'invalid', so a caller that only allows 'public' fails closed.
 */
export function classifyAddress(address: string): AddressClass {
  const parsed = parseAddress(stripZone(address))
  if (parsed === null) return 'invalid'
  return parsed instanceof ipaddr.IPv4 ? classifyIpv4(parsed) : classifyIpv6(parsed)
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
// ipaddr.js's own `range()` lumps documentation, benchmarking and reserved blocks together, and a blocked
// attempt records which one it met, so the registries are spelled out here. First match wins, so specific
// entries precede the blocks that contain them. Sources:
// https://www.iana.org/assignments/iana-ipv4-special-registry and .../iana-ipv6-special-registry.

type Rule<A extends IpAddress> = readonly [range: [A, number], verdict: AddressClass]

const v4 = (cidr: string, verdict: AddressClass): Rule<ipaddr.IPv4> => [ipaddr.IPv4.parseCIDR(cidr), verdict]
const v6 = (cidr: string, verdict: AddressClass): Rule<ipaddr.IPv6> => [ipaddr.IPv6.parseCIDR(cidr), verdict]

const IPV4_RULES: ReadonlyArray<Rule<ipaddr.IPv4>> = [
  // Linux routes connections to 0.0.0.0 to the local host, so "this network" is as dangerous as loopback.
  v4('0.0.0.0/8', 'unspecified'),
  v4('10.0.0.0/8', 'private'),
  v4('100.64.0.0/10', 'carrier_grade_nat'),
  v4('127.0.0.0/8', 'loopback'),
  // Includes 169.254.169.254, the cloud instance-metadata endpoint.
  v4('169.254.0.0/16', 'link_local'),
  v4('172.16.0.0/12', 'private'),
  // IETF protocol assignments. Two of its /32s (PCP and TURN anycast) are globally reachable, but no
  // legitimate webhook or JWKS lives there, so the whole block is refused.
  v4('192.0.0.0/24', 'reserved'),
  v4('192.0.2.0/24', 'documentation'),
  // Deprecated 6to4 relay anycast (RFC 7526).
  v4('192.88.99.0/24', 'reserved'),
  v4('192.168.0.0/16', 'private'),
  v4('198.18.0.0/15', 'benchmarking'),
  v4('198.51.100.0/24', 'documentation'),
  v4('203.0.113.0/24', 'documentation'),
  v4('224.0.0.0/4', 'multicast'),
  v4('255.255.255.255/32', 'broadcast'),
  v4('240.0.0.0/4', 'reserved'),
]

/**
 * Mapped and NAT64 addresses reach the embedded IPv4 host, and 6to4 addresses carry the IPv4 address of the
 * tunnel endpoint, so each is judged as that IPv4 host; the number is the byte where it starts.
 */
const EMBEDDING_IPV4: ReadonlyArray<readonly [range: [ipaddr.IPv6, number], at: number]> = [
  [ipaddr.IPv6.parseCIDR('::ffff:0:0/96'), 12],
  [ipaddr.IPv6.parseCIDR('64:ff9b::/96'), 12],
  [ipaddr.IPv6.parseCIDR('2002::/16'), 2],
]

const IPV6_RULES: ReadonlyArray<Rule<ipaddr.IPv6>> = [
  v6('::/128', 'unspecified'),
  v6('::1/128', 'loopback'),
  v6('64:ff9b:1::/48', 'private'),
  v6('100::/64', 'reserved'),
  v6('100:0:0:1::/64', 'reserved'),
  // Inside 2001::/23 only these are marked globally reachable: PCP, TURN and DNS-SD anycast, AMT,
  // AS112-v6, ORCHIDv2 and drone remote ID.
  v6('2001:1::1/128', 'public'),
  v6('2001:1::2/128', 'public'),
  v6('2001:1::3/128', 'public'),
  v6('2001:2::/48', 'benchmarking'),
  v6('2001:3::/32', 'public'),
  v6('2001:4:112::/48', 'public'),
  v6('2001:20::/28', 'public'),
  v6('2001:30::/28', 'public'),
  // The rest, including Teredo (2001::/32), which tunnels to IPv4 hosts we cannot vet.
  v6('2001::/23', 'reserved'),
  v6('2001:db8::/32', 'documentation'),
  v6('3fff::/20', 'documentation'),
  v6('5f00::/16', 'reserved'),
  v6('fc00::/7', 'unique_local'),
  v6('fe80::/10', 'link_local'),
  v6('ff00::/8', 'multicast'),
  // Outside 2000::/3 nothing is allocated for global unicast (IPv4-compatible ::/96, deprecated site-local
  // fec0::/10, ...), so it is refused rather than trusted.
  v6('2000::/3', 'public'),
]

function classifyIpv4(address: ipaddr.IPv4): AddressClass {
  return IPV4_RULES.find(([range]) => address.match(range))?.[1] ?? 'public'
}

function classifyIpv6(address: ipaddr.IPv6): AddressClass {
  const embedding = EMBEDDING_IPV4.find(([range]) => address.match(range))
  if (embedding) {
    const at = embedding[1]
    return classifyIpv4(new ipaddr.IPv4(address.toByteArray().slice(at, at + 4)))
  }
  return IPV6_RULES.find(([range]) => address.match(range))?.[1] ?? 'reserved'
}

function stripZone(address: string): string {
  const percent = address.indexOf('%')
  return percent === -1 ? address : address.slice(0, percent)
}

function parseAddress(text: string): IpAddress | null {
  // isIP is the gatekeeper for syntax: ipaddr.js also reads the legacy spellings (`0177.0.0.1`, `127.1`,
  // `2130706433`) that isIP rejects as ambiguous.
  const family = isIP(text)
  if (family === 4) return ipaddr.IPv4.parse(text)
  // ipaddr.js reads `::a.b.c.d` (IPv4-compatible, deprecated) as the IPv4-mapped `::ffff:a.b.c.d`, which is
  // another host; spelled `0::a.b.c.d` it is read as written.
  if (family === 6 && !text.includes('%')) return ipaddr.IPv6.parse(text.startsWith('::') ? `0${text}` : text)
  return null
}

function familyOf(address: IpAddress): IpFamily {
  return address instanceof ipaddr.IPv4 ? 4 : 6
}
