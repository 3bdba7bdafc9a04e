import { createServer, type IncomingHttpHeaders, type RequestListener } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, it, expect } from 'vitest'
import type { Agent } from 'undici'
import { parseCidrList } from './addresses.js'
import { classifyNetworkError, createGuardedAgent } from './guarded-agent.js'
import { guardedRequest } from './fetch.js'

interface Receiver {
  url: string
  connections: number
  requests: {
    method: string | undefined
    url: string | undefined
    headers: IncomingHttpHeaders
    body: string
    remotePort: number | undefined
  }[]
}

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()))
})

async function startReceiver(handler: RequestListener): Promise<Receiver> {
  const receiver: Receiver = { url: '', connections: 0, requests: [] }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      receiver.requests.push({
        method: req.method,
        url: req.url,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        remotePort: req.socket.remotePort,
      })
      handler(req, res)
    })
  })
  server.on('connection', () => {
    receiver.connections += 1
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  cleanups.push(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return receiver
}

function loopbackAgent(): Agent {
  const agent = createGuardedAgent({ allowedCidrs: parseCidrList('127.0.0.0/8') })
  cleanups.push(() => agent.destroy())
  return agent
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected the request to fail')
}

describe('guardedRequest', () => {
  it('sends method, headers and body, and returns status, headers and the body', async () => {
    const receiver = await startReceiver((_req, res) => {
      res.setHeader('x-receiver', 'yes')
      res.end('{"received":true}')
    })
    const response = await guardedRequest(loopbackAgent(), {
      url: `${receiver.url}/hook?x=1`,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'webhook-id': 'evt_1' },
      body: '{"type":"ping"}',
      timeoutMs: 2000,
      maxResponseBytes: 1024,
    })
    expect(response).toMatchObject({ status: 200, bodyExcerpt: '{"received":true}', truncated: false })
    expect(response.headers['x-receiver']).toBe('yes')
    expect(receiver.requests).toMatchObject([
      { method: 'POST', url: '/hook?x=1', body: '{"type":"ping"}', headers: { 'webhook-id': 'evt_1' } },
    ])
  })

  it('measures the duration with the injected clock', async () => {
    const receiver = await startReceiver((_req, res) => res.end())
    const ticks = [1000, 1250.5]
    const response = await guardedRequest(loopbackAgent(), {
      url: receiver.url,
      timeoutMs: 2000,
      maxResponseBytes: 16,
      now: () => ticks.shift() ?? Number.NaN,
    })
    expect(response.durationMs).toBe(250.5)
  })

  it('keeps only maxResponseBytes of a large body and reports the truncation', async () => {
    const receiver = await startReceiver((_req, res) => res.end(Buffer.alloc(1024 * 1024, 'a')))
    const agent = loopbackAgent()
    const response = await guardedRequest(agent, { url: receiver.url, timeoutMs: 5000, maxResponseBytes: 1024 })
    expect(response.status).toBe(200)
    expect(Buffer.byteLength(response.bodyExcerpt)).toBe(1024)
    expect(response.bodyExcerpt).toBe('a'.repeat(1024))
    expect(response.truncated).toBe(true)
    // The rest of the body was abandoned with its connection, not drained for reuse.
    await guardedRequest(agent, { url: receiver.url, timeoutMs: 5000, maxResponseBytes: 1024 })
    const [first, second] = receiver.requests
    expect(second?.remotePort).not.toBe(first?.remotePort)
  })

  it('is not truncated when the body is exactly the limit', async () => {
    const receiver = await startReceiver((_req, res) => res.end('x'.repeat(64)))
    const response = await guardedRequest(loopbackAgent(), { url: receiver.url, timeoutMs: 2000, maxResponseBytes: 64 })
    expect(response).toMatchObject({ bodyExcerpt: 'x'.repeat(64), truncated: false })
  })

  it('drops a multi-byte character cut by the limit rather than emitting a replacement character', async () => {
    const receiver = await startReceiver((_req, res) => res.end('ab€€'))
    // "ab€" is 5 bytes; the limit falls inside the second "€".
    const response = await guardedRequest(loopbackAgent(), { url: receiver.url, timeoutMs: 2000, maxResponseBytes: 6 })
    expect(response).toMatchObject({ bodyExcerpt: 'ab€', truncated: true })
  })

  it('returns a redirect as is, without following it', async () => {
    const receiver = await startReceiver((req, res) => {
      if (req.url === '/start') {
        res.writeHead(302, { location: '/elsewhere' })
        res.end()
      } else {
        res.end('followed')
      }
    })
    const response = await guardedRequest(loopbackAgent(), {
      url: `${receiver.url}/start`,
      timeoutMs: 2000,
      maxResponseBytes: 1024,
    })
    expect(response.status).toBe(302)
    expect(response.headers.location).toBe('/elsewhere')
    // A redirect is followed before its request answers, so a follow-up would have arrived by now.
    expect(receiver.requests.map((r) => r.url)).toEqual(['/start'])
  })

  it("rejects after timeoutMs when the receiver never answers, classified as 'timeout'", async () => {
    const receiver = await startReceiver(() => {})
    const startedAt = performance.now()
    const error = await rejection(
      guardedRequest(loopbackAgent(), { url: receiver.url, timeoutMs: 200, maxResponseBytes: 1024 }),
    )
    const elapsed = performance.now() - startedAt
    expect(classifyNetworkError(error)).toBe('timeout')
    expect(elapsed).toBeGreaterThanOrEqual(150)
    expect(elapsed).toBeLessThan(5000)
  })

  it('applies the timeout to a body that stalls after the headers', async () => {
    const receiver = await startReceiver((_req, res) => {
      res.writeHead(200)
      res.write('partial')
    })
    const error = await rejection(
      guardedRequest(loopbackAgent(), { url: receiver.url, timeoutMs: 200, maxResponseBytes: 1024 }),
    )
    expect(classifyNetworkError(error)).toBe('timeout')
  })

  it('keeps the deadline while the connection is still being made', async () => {
    // A resolver that never answers: only the exchange's own deadline can end the wait.
    const agent = createGuardedAgent({ allowedCidrs: [], connectTimeoutMs: 60_000, lookup: () => {} })
    cleanups.push(() => agent.destroy())
    const startedAt = performance.now()
    const error = await rejection(guardedRequest(agent, { url: 'http://hangs.example/', timeoutMs: 200, maxResponseBytes: 1024 }))
    expect(classifyNetworkError(error)).toBe('timeout')
    expect(performance.now() - startedAt).toBeLessThan(5000)
  })

  it("classifies a closed port as 'refused'", async () => {
    const receiver = await startReceiver(() => {})
    const closedUrl = receiver.url
    await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()))
    const error = await rejection(
      guardedRequest(loopbackAgent(), { url: closedUrl, timeoutMs: 2000, maxResponseBytes: 1024 }),
    )
    expect(classifyNetworkError(error)).toBe('refused')
  })

  it('aborts when the caller signal fires', async () => {
    const controller = new AbortController()
    // Fired once the request has reached the receiver, which never answers it.
    const receiver = await startReceiver(() => controller.abort())
    const pending = guardedRequest(loopbackAgent(), {
      url: receiver.url,
      timeoutMs: 5000,
      maxResponseBytes: 1024,
      signal: controller.signal,
    })
    const error = await rejection(pending)
    expect(error).toMatchObject({ name: 'AbortError' })
  })

  it.each(['ftp://127.0.0.1/', 'file:///etc/passwd', 'data:text/plain,hi', 'ws://127.0.0.1/'])(
    'refuses the non-HTTP URL %s',
    async (url) => {
      await expect(
        guardedRequest(loopbackAgent(), { url, timeoutMs: 1000, maxResponseBytes: 1024 }),
      ).rejects.toThrow(/only http: and https: are allowed/)
    },
  )
})
