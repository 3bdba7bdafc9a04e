import { createServer, type IncomingHttpHeaders, type RequestListener, type Server } from 'node:http'
import { createServer as createTcpServer } from 'node:net'
import type { LookupAddress, LookupOptions } from 'node:dns'
import type { AddressInfo, LookupFunction } from 'node:net'
import { afterEach, describe, it, expect } from 'vitest'
import { request, errors as undiciErrors, type Agent } from 'undici'
import { isAllowedAddress, parseCidrList, parseHostLiteral } from './addresses.js'
import { BlockedAddressError, classifyNetworkError, createGuardedAgent } from './guarded-agent.js'
import { guardedRequest } from './fetch.js'

interface Receiver {
  port: number
  connections: number
  requests: { host: string | undefined; remoteAddress: string | undefined; headers: IncomingHttpHeaders }[]
}

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()))
})

async function listen(server: Server | ReturnType<typeof createTcpServer>): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())))
  return (server.address() as AddressInfo).port
}

async function startReceiver(handler: RequestListener = (_req, res) => res.end('ok')): Promise<Receiver> {
  const receiver: Receiver = { port: 0, connections: 0, requests: [] }
  const server = createServer((req, res) => {
    receiver.requests.push({ host: req.headers.host, remoteAddress: req.socket.remoteAddress, headers: req.headers })
    handler(req, res)
  })
  server.on('connection', () => {
    receiver.connections += 1
  })
  receiver.port = await listen(server)
  cleanups.push(async () => server.closeAllConnections())
  return receiver
}

function guardedAgent(options: Parameters<typeof createGuardedAgent>[0]): Agent {
  const agent = createGuardedAgent(options)
  cleanups.push(() => agent.destroy())
  return agent
}

/** A resolver that answers from a fixed table and records what it was asked. */
function fakeLookup(table: Record<string, string[]>): LookupFunction & { calls: [string, LookupOptions][] } {
  const calls: [string, LookupOptions][] = []
  const lookup = (
    hostname: string,
    options: LookupOptions,
    callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    calls.push([hostname, options])
    const addresses = table[hostname]
    if (addresses === undefined) {
      const error: NodeJS.ErrnoException = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
        code: 'ENOTFOUND',
      })
      return void setImmediate(() => callback(error, []))
    }
    const entries = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
    setImmediate(() => callback(null, entries))
  }
  return Object.assign(lookup, { calls })
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected the request to be refused')
}

describe('guarded agent without an allow-list', () => {
  it('refuses every loopback spelling from the issue, and nothing reaches the receiver', async () => {
    const receiver = await startReceiver()
    const agent = guardedAgent({ allowedCidrs: [] })
    const urls = [
      `http://127.0.0.1:${receiver.port}/`,
      `http://localhost:${receiver.port}/`, // through the real resolver (/etc/hosts)
      `http://2130706433:${receiver.port}/`,
      `http://0x7f.1:${receiver.port}/`,
      `http://0177.0.0.1:${receiver.port}/`,
      `http://[::ffff:127.0.0.1]:${receiver.port}/`,
      `http://0:${receiver.port}/`,
      `http://[::1]:${receiver.port}/`,
    ]
    for (const url of urls) {
      const error = await rejection(request(url, { dispatcher: agent }))
      expect(error, url).toBeInstanceOf(BlockedAddressError)
    }
    expect(receiver.connections).toBe(0)
  })

  it.each([
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254', 'link_local'],
    ['http://10.0.0.1/', '10.0.0.1', 'private'],
  ])('refuses %s before connecting', async (url, address, reason) => {
    // Guard for the guard: this test must never put a packet on a real network, so it only runs the
    // request once the address is known to be refused.
    expect(isAllowedAddress(parseHostLiteral(new URL(url).hostname)?.address ?? '', [])).toEqual({
      allowed: false,
      reason,
    })
    const agent = guardedAgent({ allowedCidrs: [] })
    const error = await rejection(request(url, { dispatcher: agent }))
    expect(error).toBeInstanceOf(BlockedAddressError)
    expect(error).toMatchObject({ hostname: address, address, reason })
  })

  it('refuses a name that resolves to loopback', async () => {
    const receiver = await startReceiver()
    const lookup = fakeLookup({ 'internal.example': ['127.0.0.1'] })
    const agent = guardedAgent({ allowedCidrs: [], lookup })
    const error = await rejection(request(`http://internal.example:${receiver.port}/`, { dispatcher: agent }))
    expect(error).toBeInstanceOf(BlockedAddressError)
    expect(error).toMatchObject({ hostname: 'internal.example', address: '127.0.0.1', reason: 'loopback' })
    expect(receiver.connections).toBe(0)
  })

  it.each([[['93.184.216.34', '127.0.0.1']], [['127.0.0.1', '93.184.216.34']], [['2606:4700::1111', '::1']]])(
    'refuses a name resolving to %j (one public, one loopback)',
    async (addresses) => {
      const receiver = await startReceiver()
      const agent = guardedAgent({ allowedCidrs: [], lookup: fakeLookup({ 'rebind.example': addresses }) })
      const error = await rejection(request(`http://rebind.example:${receiver.port}/`, { dispatcher: agent }))
      expect(error).toBeInstanceOf(BlockedAddressError)
      expect(error).toMatchObject({ hostname: 'rebind.example', reason: 'loopback' })
      expect(receiver.connections).toBe(0)
    },
  )

  it('shows callers the BlockedAddressError itself, from undici.request and from guardedRequest', async () => {
    const receiver = await startReceiver()
    const agent = guardedAgent({ allowedCidrs: [] })
    const url = `http://127.0.0.1:${receiver.port}/hook`

    const direct = await rejection(request(url, { dispatcher: agent }))
    expect(direct).toBeInstanceOf(BlockedAddressError)
    expect(direct).toMatchObject({
      name: 'BlockedAddressError',
      code: 'HERALD_BLOCKED_ADDRESS',
      hostname: '127.0.0.1',
      address: '127.0.0.1',
      reason: 'loopback',
      message: 'Refusing to connect to 127.0.0.1: loopback address',
    })
    expect(classifyNetworkError(direct)).toBe('blocked_address')

    const viaFetch = await rejection(guardedRequest(agent, { url, timeoutMs: 1000, maxResponseBytes: 1024 }))
    expect(viaFetch).toBeInstanceOf(BlockedAddressError)
    expect(classifyNetworkError(viaFetch)).toBe('blocked_address')
    expect(receiver.connections).toBe(0)
  })
})

describe('guarded agent with 127.0.0.0/8 allow-listed', () => {
  const allowedCidrs = parseCidrList('127.0.0.0/8')

  it('reaches an allow-listed literal address with the original Host header', async () => {
    const receiver = await startReceiver()
    const agent = guardedAgent({ allowedCidrs })
    const response = await request(`http://127.0.0.1:${receiver.port}/hook`, { dispatcher: agent })
    expect(response.statusCode).toBe(200)
    expect(await response.body.text()).toBe('ok')
    expect(receiver.requests[0]?.host).toBe(`127.0.0.1:${receiver.port}`)
  })

  it('resolves a name once and connects to the vetted address, keeping the name in Host', async () => {
    const receiver = await startReceiver()
    // receiver.test does not exist in real DNS, so reaching the receiver proves the vetted address was used.
    const lookup = fakeLookup({ 'receiver.test': ['127.0.0.1'] })
    const agent = guardedAgent({ allowedCidrs, lookup })
    const response = await request(`http://receiver.test:${receiver.port}/hook`, { dispatcher: agent })
    expect(response.statusCode).toBe(200)
    await response.body.dump()
    expect(lookup.calls).toEqual([['receiver.test', { all: true }]])
    expect(receiver.requests).toMatchObject([{ host: `receiver.test:${receiver.port}`, remoteAddress: '127.0.0.1' }])
  })

  it('still refuses addresses outside the allow-list, even next to allowed ones', async () => {
    const receiver = await startReceiver()
    const lookup = fakeLookup({ 'mixed.test': ['127.0.0.1', '10.0.0.1'] })
    const agent = guardedAgent({ allowedCidrs, lookup })
    const error = await rejection(request(`http://mixed.test:${receiver.port}/`, { dispatcher: agent }))
    expect(error).toMatchObject({ code: 'HERALD_BLOCKED_ADDRESS', address: '10.0.0.1', reason: 'private' })
    expect(receiver.connections).toBe(0)
    const loopback6 = await rejection(request(`http://[::1]:${receiver.port}/`, { dispatcher: agent }))
    expect(loopback6).toMatchObject({ code: 'HERALD_BLOCKED_ADDRESS', reason: 'loopback' })
  })

  it("tries the name's next vetted address when one refuses the connection", async () => {
    const receiver = await startReceiver()
    // Nothing listens on 127.0.0.2, so the first attempt is refused and the second reaches the receiver.
    const lookup = fakeLookup({ 'two.test': ['127.0.0.2', '127.0.0.1'] })
    const agent = guardedAgent({ allowedCidrs, lookup })
    const response = await request(`http://two.test:${receiver.port}/`, { dispatcher: agent })
    expect(response.statusCode).toBe(200)
    await response.body.dump()
    expect(receiver.connections).toBe(1)
  })

  it('sends the original name as TLS SNI while connecting to the vetted address', async () => {
    let clientHello = Buffer.alloc(0)
    const tlsReceiver = createTcpServer((socket) => {
      socket.once('data', (data) => {
        clientHello = data
        socket.destroy()
      })
    })
    const port = await listen(tlsReceiver)
    const lookup = fakeLookup({ 'secure.test': ['127.0.0.1'] })
    const agent = guardedAgent({ allowedCidrs, lookup })
    const error = await rejection(request(`https://secure.test:${port}/`, { dispatcher: agent }))
    // The ClientHello's server_name extension is plaintext.
    expect(clientHello.includes('secure.test')).toBe(true)
    expect(lookup.calls).toHaveLength(1)
    expect(classifyNetworkError(error)).toBe('reset')
  })

  it("classifies a TLS handshake with a plain-HTTP port as 'tls'", async () => {
    const receiver = await startReceiver()
    const agent = guardedAgent({ allowedCidrs })
    const error = await rejection(request(`https://127.0.0.1:${receiver.port}/`, { dispatcher: agent }))
    expect(classifyNetworkError(error)).toBe('tls')
  })

  it("classifies resolver failures as 'dns' and a stalled resolver as 'timeout'", async () => {
    const agent = guardedAgent({ allowedCidrs, lookup: fakeLookup({}) })
    const notFound = await rejection(request('http://missing.test/', { dispatcher: agent }))
    expect(notFound).toMatchObject({ code: 'ENOTFOUND' })
    expect(classifyNetworkError(notFound)).toBe('dns')

    const stalled: LookupFunction = () => {}
    const slowAgent = guardedAgent({ allowedCidrs, lookup: stalled, connectTimeoutMs: 50 })
    const timedOut = await rejection(request('http://stalled.test/', { dispatcher: slowAgent }))
    expect(timedOut).toBeInstanceOf(undiciErrors.ConnectTimeoutError)
    expect(classifyNetworkError(timedOut)).toBe('timeout')
  })
})

describe('classifyNetworkError', () => {
  const coded = (code: string, cause?: unknown): Error => Object.assign(new Error(code, { cause }), { code })
  const named = (name: string): Error => Object.assign(new Error(name), { name })

  it.each([
    [coded('UND_ERR_CONNECT_TIMEOUT'), 'timeout'],
    [coded('UND_ERR_HEADERS_TIMEOUT'), 'timeout'],
    [coded('UND_ERR_BODY_TIMEOUT'), 'timeout'],
    [coded('ETIMEDOUT'), 'timeout'],
    [new DOMException('The operation was aborted due to timeout', 'TimeoutError'), 'timeout'],
    [new DOMException('This operation was aborted', 'AbortError'), 'timeout'],
    [named('AbortError'), 'timeout'],
    [coded('ECONNREFUSED'), 'refused'],
    [coded('ENOTFOUND'), 'dns'],
    [coded('EAI_AGAIN'), 'dns'],
    [coded('ECONNRESET'), 'reset'],
    [coded('EPIPE'), 'reset'],
    [coded('UND_ERR_SOCKET'), 'reset'],
    [coded('ERR_TLS_CERT_ALTNAME_INVALID'), 'tls'],
    [coded('ERR_SSL_WRONG_VERSION_NUMBER'), 'tls'],
    [coded('CERT_HAS_EXPIRED'), 'tls'],
    [coded('DEPTH_ZERO_SELF_SIGNED_CERT'), 'tls'],
    [coded('SELF_SIGNED_CERT_IN_CHAIN'), 'tls'],
    [coded('UNABLE_TO_VERIFY_LEAF_SIGNATURE'), 'tls'],
    [coded('EPROTO'), 'tls'],
    [coded('UND_ERR_RES_EXCEEDED_MAX_SIZE'), 'response_too_large'],
    [new BlockedAddressError('internal.example', '10.0.0.1', 'private'), 'blocked_address'],
    [coded('EHOSTUNREACH'), 'network'],
    [new Error('something else'), 'network'],
    ['not an error', 'network'],
    [undefined, 'network'],
    // Wrapped errors are judged by what they wrap, as fetch() and undici do.
    [new TypeError('fetch failed', { cause: coded('ECONNREFUSED') }), 'refused'],
    [new TypeError('fetch failed', { cause: coded('UND_ERR_SOCKET', coded('ECONNRESET')) }), 'reset'],
    [new Error('outer', { cause: new BlockedAddressError('a.example', '127.0.0.1', 'loopback') }), 'blocked_address'],
    [new AggregateError([coded('ENETUNREACH'), coded('ECONNREFUSED')]), 'refused'],
  ])('%o is %s', (error, expected) => {
    expect(classifyNetworkError(error)).toBe(expected)
  })

  it('survives a cause cycle', () => {
    const a: Error & { cause?: unknown } = new Error('a')
    const b = new Error('b', { cause: a })
    a.cause = b
    expect(classifyNetworkError(a)).toBe('network')
  })
})
