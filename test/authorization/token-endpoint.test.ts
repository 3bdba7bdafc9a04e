import { once } from 'node:events'
import { decodeJwt } from 'jose'
import { beforeAll, describe, expect, it } from 'vitest'
import { OAUTH_BODY_LIMIT } from '../../src/authorization/token/token-request.js'
import { type CreatedAccount, forEachDialect, startHerald, useHerald } from '../support/herald.js'
import { type ApiResponse, basicAuth, call, createAccount, managementToken } from '../support/http.js'
import { exchange } from '../support/raw-http.js'
import { eventually } from '../support/receiver.js'

/**
 * What the token endpoint must do as every route under an account's base does, where other suites don't already
 * pin it down: CORS on every answer, body limits and Content-Length, the router's errors, request ids and log
 * lines, proxies, and shutdown. Written so that serving the endpoint some other way (below Fastify, say) keeps it.
 */

const APP = 'https://app.example'
const FORM = 'application/x-www-form-urlencoded'

function tokenRequest(account: CreatedAccount, body: string, headers: Record<string, string | number> = {}): string {
  const all = { host: '127.0.0.1', 'content-type': FORM, 'content-length': Buffer.byteLength(body), authorization: basicAuth(account.clientId, account.clientSecret), ...headers }
  const head = Object.entries(all).map(([name, value]) => `${name}: ${value}\r\n`).join('')
  return `POST /accounts/${account.id}/oauth/tokens HTTP/1.1\r\n${head}\r\n${body}`
}

function expectOAuthError(answer: { status: number; body: unknown }, status: number, error: string, description?: string): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status)
  expect(answer.body).toMatchObject({ error, ...(description !== undefined && { error_description: description }) })
}

forEachDialect((dialect) => {
  const h = useHerald(dialect)
  let account: CreatedAccount
  let spa: { client_id: string; client_secret: string }

  const tokens = (body: string, headers: Record<string, string> = {}, client = { id: account.clientId, secret: account.clientSecret }) =>
    call<Record<string, unknown>>(`${account.base}/oauth/tokens`, 'POST', { body, headers: { 'content-type': FORM, authorization: basicAuth(client.id, client.secret), ...headers } })

  beforeAll(async () => {
    account = await createAccount(h.current, 'token-endpoint')
    const created = await call<{ client_id: string; client_secret: string }>(`${account.base}/oauth/clients`, 'POST', {
      token: await managementToken(account),
      json: { grant_types: ['client_credentials'], allowed_cors_origins: [APP] },
    })
    expect(created.status, created.text).toBe(201)
    spa = created.body
  })

  describe('CORS', () => {
    const fromApp = (body: string) => tokens(body, { origin: APP }, { id: spa.client_id, secret: spa.client_secret })
    const expectAllowed = (answer: ApiResponse, where: string) => {
      expect(answer.headers.get('access-control-allow-origin'), where).toBe(APP)
      expect(answer.headers.get('vary'), where).toBe('Origin')
    }

    it('allows a registered origin on answers refused before or while reading the body, not only on tokens and client errors', async () => {
      const repeated = await fromApp('grant_type=client_credentials&grant_type=client_credentials')
      expectOAuthError(repeated, 400, 'invalid_request', 'The parameter grant_type is repeated')
      expectAllowed(repeated, 'repeated parameter')

      const missing = await fromApp('scope=x')
      expectOAuthError(missing, 400, 'invalid_request', "body must have required property 'grant_type'")
      expectAllowed(missing, 'schema failure')

      const json = await tokens('{"grant_type":"client_credentials"}', { origin: APP, 'content-type': 'application/json' })
      expectOAuthError(json, 400, 'invalid_request', 'Content-Type must be application/x-www-form-urlencoded')
      expectAllowed(json, 'wrong media type')

      const unsupported = await fromApp('grant_type=password')
      expectOAuthError(unsupported, 400, 'unsupported_grant_type')
      expectAllowed(unsupported, 'unsupported grant')
    })

    it('says Vary: Origin without allowing an unregistered origin, or a request without one', async () => {
      for (const origin of ['https://evil.example', undefined]) {
        const answer = await tokens('grant_type=client_credentials', origin === undefined ? {} : { origin })
        expect(answer.status).toBe(200)
        expect(answer.headers.get('access-control-allow-origin'), origin).toBeNull()
        expect(answer.headers.get('vary'), origin).toBe('Origin')
      }
    })

    it('leaves the answer for an unknown account without CORS headers, as the account is resolved first', async () => {
      const answer = await call(`${h.current.origin}/accounts/acct_00000000000000000000000000/oauth/tokens`, 'POST', {
        form: { grant_type: 'client_credentials' },
        headers: { origin: APP },
      })
      expect(answer.status).toBe(404)
      expect(answer.body).toMatchObject({ code: 'not_found', detail: 'No such account' })
      expect(answer.headers.get('access-control-allow-origin')).toBeNull()
      expect(answer.headers.get('cache-control')).toBeNull()
    })
  })

  describe('the body', () => {
    it(`accepts a form of exactly ${OAUTH_BODY_LIMIT} bytes and refuses one byte more, closing the connection`, async () => {
      const base = 'grant_type=client_credentials&pad='
      const atLimit = await tokens(base + 'p'.repeat(OAUTH_BODY_LIMIT - base.length))
      expect(atLimit.status, atLimit.text).toBe(200)

      const [over] = await exchange(h.current.origin, [tokenRequest(account, base + 'p'.repeat(OAUTH_BODY_LIMIT - base.length + 1))])
      expect(over?.status).toBe(400)
      expect(JSON.parse(over?.body ?? '')).toEqual({ error: 'invalid_request', error_description: 'Request body is too large' })
      expect(over?.headers).toMatchObject({ connection: 'close', 'cache-control': 'no-store', pragma: 'no-cache' })
    })

    it('refuses a chunked body over the limit, which announces no length', async () => {
      const chunk = 'p'.repeat(OAUTH_BODY_LIMIT + 1)
      const request = tokenRequest(account, `${chunk.length.toString(16)}\r\n${chunk}\r\n0\r\n\r\n`, { 'transfer-encoding': 'chunked' }).replace(/content-length: \d+\r\n/, '')
      const [answer] = await exchange(h.current.origin, [request])
      expect(answer?.status).toBe(400)
      expect(JSON.parse(answer?.body ?? '')).toMatchObject({ error: 'invalid_request', error_description: 'Request body is too large' })
    })

    it('accepts a chunked form body', async () => {
      const body = 'grant_type=client_credentials'
      const request = tokenRequest(account, `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`, { 'transfer-encoding': 'chunked', connection: 'close' }).replace(/content-length: \d+\r\n/, '')
      const [answer] = await exchange(h.current.origin, [request])
      expect(answer?.status, answer?.body).toBe(200)
      expect(JSON.parse(answer?.body ?? '')).toMatchObject({ token_type: 'Bearer' })
    })

    it('reads no body at all when there is neither Content-Type nor a body', async () => {
      const answer = await call(`${account.base}/oauth/tokens`, 'POST', { headers: { authorization: basicAuth(account.clientId, account.clientSecret) } })
      expectOAuthError(answer, 400, 'invalid_request', 'body must be object')
    })

    it('accepts the form media type in any case and with parameters', async () => {
      for (const type of ['Application/X-WWW-Form-Urlencoded', `${FORM}; charset=UTF-8`, `${FORM};`]) {
        expect((await tokens('grant_type=client_credentials', { 'content-type': type })).status, type).toBe(200)
      }
    })
  })

  describe('the answer', () => {
    it('is the JSON a serializer would write, with exactly the expected headers', async () => {
      const [answer] = await exchange(h.current.origin, [tokenRequest(account, 'grant_type=client_credentials', { connection: 'close', origin: APP })])
      expect(answer?.status, answer?.body).toBe(200)
      const body = JSON.parse(answer?.body ?? '') as Record<string, unknown>
      expect(Object.keys(body)).toEqual(['access_token', 'token_type', 'expires_in', 'scope'])
      expect(answer?.body).toBe(JSON.stringify(body))
      expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: expect.any(String) })
      // Order is Fastify's business; the set of headers is the endpoint's.
      expect(Object.keys(answer?.headers ?? {}).sort()).toEqual(['access-control-allow-origin', 'cache-control', 'connection', 'content-length', 'content-type', 'date', 'pragma', 'referrer-policy', 'vary'])
      expect(answer?.headers).toMatchObject({
        vary: 'Origin',
        'access-control-allow-origin': APP,
        'cache-control': 'no-store',
        pragma: 'no-cache',
        'content-type': 'application/json; charset=utf-8',
        'content-length': String(Buffer.byteLength(answer?.body ?? '')),
      })
    })

    it('answers requests that arrive together, and so are issued in one batch, each in order and an error with its own headers', async () => {
      const valid = 'grant_type=client_credentials'
      const unknownScope = 'grant_type=client_credentials&scope=no-such-scope'
      const answers = await exchange(h.current.origin, [
        tokenRequest(account, valid) + tokenRequest(account, unknownScope) + tokenRequest(account, valid, { connection: 'close' }),
      ])
      expect(answers.map((answer) => answer.status)).toEqual([200, 400, 200])
      expect(JSON.parse(answers[1]?.body ?? '')).toMatchObject({ error: 'invalid_scope' })
      for (const answer of answers) expect(answer.headers).toMatchObject({ 'cache-control': 'no-store', pragma: 'no-cache', 'content-type': 'application/json; charset=utf-8' })
      const [first, , last] = answers.map((answer) => (answer.status === 200 ? (JSON.parse(answer.body) as { access_token: string }).access_token : ''))
      expect(decodeJwt(first ?? '').jti).not.toBe(decodeJwt(last ?? '').jti)
    })
  })

  describe('the URL', () => {
    const post = (path: string) => call(`${h.current.origin}${path}`, 'POST', { form: { grant_type: 'client_credentials' }, headers: { authorization: basicAuth(account.clientId, account.clientSecret) } })

    it('is served with a query string, and with a percent-encoded account id', async () => {
      expect((await post(`/accounts/${account.id}/oauth/tokens?ignored=1`)).status).toBe(200)
      expect((await post(`/accounts/${account.id.replace('_', '%5F')}/oauth/tokens`)).status).toBe(200)
    })

    it('answers a malformed percent-encoding 400 and an over-long account id 404, as the router does for every route', async () => {
      expect((await post('/accounts/%zz/oauth/tokens')).body).toMatchObject({ status: 400, code: 'bad_request', detail: 'The request URL is malformed' })
      expect((await post(`/accounts/${'a'.repeat(201)}/oauth/tokens`)).body).toMatchObject({ status: 404, code: 'not_found', detail: 'No such resource' })
      expect((await post(`/accounts/${'a'.repeat(200)}/oauth/tokens`)).body).toMatchObject({ status: 404, code: 'not_found', detail: 'No such account' })
    })

    it('leaves other methods and a trailing slash to Fastify: route_not_found', async () => {
      expect((await post(`/accounts/${account.id}/oauth/tokens/`)).body).toMatchObject({ code: 'route_not_found' })
      const put = await call(`${account.base}/oauth/tokens`, 'PUT', { form: { grant_type: 'client_credentials' } })
      expect(put.body).toMatchObject({ status: 404, code: 'route_not_found' })
    })
  })

  describe('behind a proxy', () => {
    it("issues for the configured issuer whatever X-Forwarded-* says, and logs the forwarded client and host under the request's id", async () => {
      const answer = await tokens('grant_type=client_credentials', {
        'x-forwarded-for': '203.0.113.9, 10.0.0.1',
        'x-forwarded-host': 'public.example, proxy.internal',
        'x-forwarded-proto': 'https',
      })
      expect(answer.status).toBe(200)
      expect(decodeJwt(String(answer.body.access_token))).toMatchObject({ iss: account.issuer, aud: account.issuer })

      const lines = h.current.logs.flatMap((chunk) => chunk.split('\n')).filter((line) => line.includes('203.0.113.9'))
      expect(lines).toHaveLength(1)
      const incoming = JSON.parse(lines[0] ?? '{}') as { reqId: string; req: Record<string, unknown> }
      expect(incoming.req).toMatchObject({ method: 'POST', url: `/accounts/${account.id}/oauth/tokens`, host: 'proxy.internal', remoteAddress: '203.0.113.9' })
      const completed = h.current.logs
        .flatMap((chunk) => chunk.split('\n'))
        .filter((line) => line.includes(`"reqId":"${incoming.reqId}"`) && line.includes('request completed'))
      expect(completed.map((line) => JSON.parse(line) as { res: unknown })).toMatchObject([{ res: { statusCode: 200 } }])
    })

    it('numbers its requests in the sequence Fastify uses for every other route', async () => {
      const before = h.current.logs.length
      await call(`${h.current.origin}/healthz`, 'GET')
      await tokens('grant_type=client_credentials')
      await call(`${h.current.origin}/healthz`, 'GET')
      const ids = h.current.logs
        .slice(before)
        .flatMap((chunk) => chunk.split('\n'))
        .filter((line) => line.includes('incoming request'))
        .map((line) => parseInt((JSON.parse(line) as { reqId: string }).reqId.replace('req-', ''), 36))
      expect(ids).toHaveLength(3)
      expect(ids[1]).toBe((ids[0] ?? 0) + 1)
      expect(ids[2]).toBe((ids[1] ?? 0) + 1)
    })
  })

  describe('during shutdown', () => {
    it('finishes a token request already being read, and answers the next one on that connection 503', async () => {
      const own = await startHerald(dialect, { worker: false })
      try {
        const target = await createAccount(own, 'shutdown')
        const body = 'grant_type=client_credentials'
        const first = tokenRequest(target, body)
        let closing: Promise<void> | undefined
        // Node emits 'request' once the headers are in, to Fastify's listener first: the request is being read.
        const reading = once(own.app.server, 'request')
        // The first request's headers and half its body arrive; the server starts closing; then the rest of the
        // body and a second, pipelined request.
        const answers = await exchange(own.origin, [first.slice(0, -10), first.slice(-10) + tokenRequest(target, body)], async () => {
          await reading
          closing = own.app.close()
          // Fastify marks itself closing, then closes the listening socket.
          await eventually(() => !own.app.server.listening, 10_000, 'the server to stop listening')
        })
        await closing
        expect(answers.map((answer) => answer.status)).toEqual([200, 503])
        expect(answers[1]?.headers.connection).toBe('close')
      } finally {
        await own.herald.close()
        await own.database.drop()
      }
    })
  })
})
