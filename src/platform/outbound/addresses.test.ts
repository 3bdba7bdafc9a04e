import { describe, it, expect } from 'vitest'
import {
  cidrContains,
  classifyAddress,
  isAllowedAddress,
  parseCidr,
  parseCidrList,
  parseHostLiteral,
  type AddressClass,
} from './addresses.js'

describe('parseCidr', () => {
  it.each([
    ['10.0.0.0/8', 4, [10, 0, 0, 0], 8],
    ['0.0.0.0/0', 4, [0, 0, 0, 0], 0],
    ['192.168.1.7', 4, [192, 168, 1, 7], 32],
    ['  172.16.0.0/12 ', 4, [172, 16, 0, 0], 12],
    ['::1', 6, [...Array<number>(15).fill(0), 1], 128],
    ['fc00::/7', 6, [0xfc, ...Array<number>(15).fill(0)], 7],
    ['::ffff:127.0.0.0/104', 6, [...Array<number>(10).fill(0), 0xff, 0xff, 127, 0, 0, 0], 104],
    ['::/0', 6, Array<number>(16).fill(0), 0],
  ])('parses %s', (text, family, network, prefixLength) => {
    const cidr = parseCidr(text)
    expect(cidr.family).toBe(family)
    expect(Array.from(cidr.network)).toEqual(network)
    expect(cidr.prefixLength).toBe(prefixLength)
  })

  it.each([
    ['', /not an IPv4 or IPv6 address/],
    ['example.com/8', /not an IPv4 or IPv6 address/],
    ['10.0.0/8', /not an IPv4 or IPv6 address/],
    ['010.0.0.0/8', /not an IPv4 or IPv6 address/],
    ['256.0.0.0/8', /not an IPv4 or IPv6 address/],
    ['fe80::1%eth0/64', /not an IPv4 or IPv6 address/],
    ['10.0.0.0/33', /prefix length must be an integer from 0 to 32/],
    ['::/129', /prefix length must be an integer from 0 to 128/],
    ['10.0.0.0/', /prefix length/],
    ['10.0.0.0/-1', /prefix length/],
    ['10.0.0.0/8/8', /prefix length/],
    ['10.0.0.0/ 8', /prefix length/],
    ['10.0.0.1/8', /host bits are set; did you mean 10\.0\.0\.0\/8\?/],
    ['fd00::1/8', /host bits are set; did you mean fd00:0:0:0:0:0:0:0\/8\?/],
  ])('refuses %j', (text, message) => {
    expect(() => parseCidr(text)).toThrow(message)
    expect(() => parseCidr(text)).toThrow(`"${text}"`)
  })
})

describe('parseCidrList', () => {
  it('splits on commas and tolerates whitespace and empty items', () => {
    const list = parseCidrList(' 127.0.0.0/8 ,\t::1 ,, 10.1.0.0/16,')
    expect(list.map((cidr) => [cidr.family, cidr.prefixLength])).toEqual([
      [4, 8],
      [6, 128],
      [4, 16],
    ])
  })

  it('is empty for an empty or blank string', () => {
    expect(parseCidrList('')).toEqual([])
    expect(parseCidrList('  ')).toEqual([])
  })

  it('reports the bad entry', () => {
    expect(() => parseCidrList('127.0.0.0/8, 10.0.0.0/40')).toThrow('"10.0.0.0/40"')
  })
})

describe('cidrContains', () => {
  it.each([
    ['10.0.0.0/8', '10.255.1.2', true],
    ['10.0.0.0/8', '11.0.0.0', false],
    ['172.16.0.0/12', '172.31.255.255', true],
    ['172.16.0.0/12', '172.32.0.0', false],
    ['100.64.0.0/10', '100.127.0.1', true],
    ['100.64.0.0/10', '100.128.0.1', false],
    ['0.0.0.0/0', '8.8.8.8', true],
    ['192.168.1.7', '192.168.1.7', true],
    ['192.168.1.7', '192.168.1.8', false],
    ['fc00::/7', 'fd12:3456::1', true],
    ['fc00::/7', 'fe00::1', false],
    ['fe80::/10', 'fe80::1%eth0', true],
    ['::1', '::1', true],
    ['::/0', '2001:db8::1', true],
    // Families don't mix, except that an IPv4 range covers the IPv4-mapped form of its addresses.
    ['127.0.0.0/8', '::ffff:7f00:1', true],
    ['127.0.0.0/8', '::ffff:127.0.0.1', true],
    ['127.0.0.0/8', '::7f00:1', false],
    ['0.0.0.0/0', '::1', false],
    ['::/0', '127.0.0.1', false],
    ['10.0.0.0/8', 'not-an-address', false],
  ])('%s contains %s: %s', (cidr, address, expected) => {
    expect(cidrContains(parseCidr(cidr), address)).toBe(expected)
  })
})

describe('classifyAddress', () => {
  const table: [string, AddressClass][] = [
    // IPv4 special-purpose registry
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'carrier_grade_nat'],
    ['100.127.255.255', 'carrier_grade_nat'],
    ['100.128.0.0', 'public'],
    ['100.63.255.255', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'link_local'],
    ['169.254.0.1', 'link_local'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.15.255.255', 'public'],
    ['172.32.0.0', 'public'],
    ['192.0.0.1', 'reserved'],
    ['192.0.0.9', 'reserved'],
    ['192.0.2.1', 'documentation'],
    ['192.88.99.1', 'reserved'],
    ['192.168.0.1', 'private'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.20.0.0', 'public'],
    ['198.51.100.1', 'documentation'],
    ['203.0.113.1', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.255', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.254', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['1.1.1.1', 'public'],
    ['8.8.8.8', 'public'],
    ['93.184.216.34', 'public'],
    ['192.0.1.255', 'public'],
    ['192.31.196.1', 'public'],
    ['223.255.255.255', 'public'],
    // IPv6 special-purpose registry and address architecture
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'link_local'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:0:0', 'unspecified'],
    ['::ffff:808:808', 'public'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'link_local'],
    ['64:ff9b::808:808', 'public'],
    ['64:ff9b:1::1', 'private'],
    ['100::1', 'reserved'],
    ['100:0:0:1::1', 'reserved'],
    ['2001::1', 'reserved'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'],
    ['2001:1::1', 'public'],
    ['2001:1::2', 'public'],
    ['2001:1::3', 'public'],
    ['2001:1::4', 'reserved'],
    ['2001:2::1', 'benchmarking'],
    ['2001:3::1', 'public'],
    ['2001:4:112::1', 'public'],
    ['2001:10::1', 'reserved'],
    ['2001:20::1', 'public'],
    ['2001:30::1', 'public'],
    ['2001:1ff::1', 'reserved'],
    ['2001:200::1', 'public'],
    ['2001:db8::1', 'documentation'],
    ['2001:db8:ffff::1', 'documentation'],
    ['2002:7f00:1::1', 'loopback'],
    ['2002:a00:1::1', 'private'],
    ['2002:808:808::1', 'public'],
    ['3fff::1', 'documentation'],
    ['3fff:fff::1', 'documentation'],
    ['3fff:1000::1', 'public'],
    ['5f00::1', 'reserved'],
    ['fc00::1', 'unique_local'],
    ['fd12:3456:789a::1', 'unique_local'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['febf::1', 'link_local'],
    ['fec0::1', 'reserved'],
    ['ff02::1', 'multicast'],
    ['ff05::1:3', 'multicast'],
    ['::7f00:1', 'reserved'],
    ['4000::1', 'reserved'],
    ['2606:4700::1111', 'public'],
    ['2a00:1450:4001::1', 'public'],
    // Not addresses at all: fail closed.
    ['', 'invalid'],
    ['localhost', 'invalid'],
    ['0177.0.0.1', 'invalid'],
    ['2130706433', 'invalid'],
    ['[::1]', 'invalid'],
  ]

  it.each(table)('%s is %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected)
  })
})

describe('isAllowedAddress', () => {
  it('allows public addresses without an allow-list', () => {
    expect(isAllowedAddress('93.184.216.34', [])).toEqual({ allowed: true })
    expect(isAllowedAddress('2606:4700::1111', [])).toEqual({ allowed: true })
  })

  it('refuses non-public addresses with the reason', () => {
    expect(isAllowedAddress('127.0.0.1', [])).toEqual({ allowed: false, reason: 'loopback' })
    expect(isAllowedAddress('169.254.169.254', [])).toEqual({ allowed: false, reason: 'link_local' })
    expect(isAllowedAddress('::ffff:a00:1', [])).toEqual({ allowed: false, reason: 'private' })
    expect(isAllowedAddress('nonsense', [])).toEqual({ allowed: false, reason: 'invalid' })
  })

  it('allows non-public addresses inside an allow-listed range, and only those', () => {
    const allowed = parseCidrList('127.0.0.0/8, fd00::/8')
    expect(isAllowedAddress('127.0.0.1', allowed)).toEqual({ allowed: true })
    expect(isAllowedAddress('::ffff:127.0.0.1', allowed)).toEqual({ allowed: true })
    expect(isAllowedAddress('fd00::5', allowed)).toEqual({ allowed: true })
    expect(isAllowedAddress('::1', allowed)).toEqual({ allowed: false, reason: 'loopback' })
    expect(isAllowedAddress('10.0.0.1', allowed)).toEqual({ allowed: false, reason: 'private' })
    expect(isAllowedAddress('fc00::5', allowed)).toEqual({ allowed: false, reason: 'unique_local' })
  })

  it('never allows something that is not an address, whatever the allow-list', () => {
    expect(isAllowedAddress('localhost', parseCidrList('0.0.0.0/0, ::/0'))).toEqual({
      allowed: false,
      reason: 'invalid',
    })
  })
})

describe('parseHostLiteral', () => {
  it('returns names as null and addresses without brackets', () => {
    expect(parseHostLiteral('example.com')).toBeNull()
    expect(parseHostLiteral('localhost')).toBeNull()
    expect(parseHostLiteral('127.0.0.1')).toEqual({ address: '127.0.0.1', family: 4 })
    expect(parseHostLiteral('[::1]')).toEqual({ address: '::1', family: 6 })
    expect(parseHostLiteral('::1')).toEqual({ address: '::1', family: 6 })
  })

  // WHATWG URL parsing turns the legacy IPv4 spellings into dotted quads and IPv6 into its compressed
  // form before anything else sees the host; these inputs must all end up as refused literals.
  it.each([
    ['http://127.0.0.1/', '127.0.0.1', 'loopback'],
    ['http://2130706433/', '127.0.0.1', 'loopback'],
    ['http://0x7f.1/', '127.0.0.1', 'loopback'],
    ['http://0x7f000001/', '127.0.0.1', 'loopback'],
    ['http://0177.0.0.1/', '127.0.0.1', 'loopback'],
    ['http://127.1/', '127.0.0.1', 'loopback'],
    ['http://127.0.0.1./', '127.0.0.1', 'loopback'],
    ['http://%31%32%37.0.0.1/', '127.0.0.1', 'loopback'],
    ['http://0/', '0.0.0.0', 'unspecified'],
    ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1', 'loopback'],
    ['http://[0:0:0:0:0:ffff:7f00:1]/', '::ffff:7f00:1', 'loopback'],
    ['http://[::1]/', '::1', 'loopback'],
    ['http://[::127.0.0.1]/', '::7f00:1', 'reserved'],
    ['http://[64:ff9b::127.0.0.1]/', '64:ff9b::7f00:1', 'loopback'],
    ['http://169.254.169.254/', '169.254.169.254', 'link_local'],
    ['http://0xa9fea9fe/', '169.254.169.254', 'link_local'],
    ['http://10.0.0.1/', '10.0.0.1', 'private'],
  ])('%s is the literal %s (%s)', (url, address, reason) => {
    const literal = parseHostLiteral(new URL(url).hostname)
    expect(literal?.address).toBe(address)
    expect(isAllowedAddress(address, [])).toEqual({ allowed: false, reason })
  })
})
