import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PROBLEMS, type ProblemCode, problemType } from '../../src/platform/http/problems.js'
import { type CreatedAccount, forEachDialect, useHerald } from '../support/herald.js'
import { createAccount, managementToken } from '../support/http.js'
import { LOCAL_DELIVERY } from './support.js'

/**
 * Garbage in, a clear 4xx out, across the webhook management API and the webhook settings: every malformed
 * request is answered with an RFC 9457 problem carrying one of Herald's codes, never a 500, and a refused write
 * leaves every list exactly as it was.
 */

interface Answer {
  status: number
  headers: Headers
  body: Record<string, unknown>
  text: string
}

/** Sends exactly these bytes; a string body gets a JSON content-type unless the caller names another. */
async function send(url: string, method: string, token: string, body?: string | Uint8Array, headers: Record<string, string> = {}): Promise<Answer> {
  const allHeaders: Record<string, string> = { authorization: `Bearer ${token}`, ...(typeof body === 'string' && { 'content-type': 'application/json' }), ...headers }
  const response = await fetch(url, { method, headers: allHeaders, body })
  const text = await response.text()
  let parsed: Record<string, unknown> = {}
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {}
  } catch {
    // Not JSON: the content-type and code assertions will say so.
  }
  return { status: response.status, headers: response.headers, body: parsed, text }
}

/** `levels` objects, each inside the one before. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {}
  for (let level = 1; level < levels; level++) value = { a: value }
  return value
}

function describeAnswer(answer: Answer): string {
  return `${answer.status} ${answer.headers.get('content-type') ?? '(no content-type)'} ${answer.text.slice(0, 400)}`
}

/** An RFC 9457 problem with one of Herald's codes; `status` is the HTTP status, always a 4xx here. */
function expectProblem(answer: Answer, status: number, code: ProblemCode | readonly ProblemCode[], what: string): void {
  const where = `${what}: ${describeAnswer(answer)}`
  expect(answer.status, where).toBe(status)
  expect(answer.headers.get('content-type'), where).toMatch(/^application\/problem\+json(;|$)/)
  const actual = answer.body.code as ProblemCode
  if (typeof code === 'string') expect(actual, where).toBe(code)
  else expect(code, where).toContain(actual)
  expect(answer.body, where).toMatchObject({ type: problemType(actual), title: PROBLEMS[actual].title, status, code: actual })
}

function expectPointer(answer: Answer, pointer: string, what: string): void {
  const pointers = ((answer.body.errors ?? []) as Array<{ pointer: string }>).map((error) => error.pointer)
  expect(pointers, `${what}: ${describeAnswer(answer)}`).toContain(pointer)
}

interface Case {
  name: string
  body: unknown
  /** Defaults to 400 validation_failed. */
  status?: number
  code?: ProblemCode
  pointer?: string
}

const PUBLIC_URL = 'https://93.184.215.14/hooks'
const secretOf = (bytes: number, fill = 1) => `whsec_${Buffer.alloc(bytes, fill).toString('base64')}`
const manyKeys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']))

forEachDialect((dialect) => {
  // Deliveries go nowhere: the only subscription names a type nobody publishes.
  const h = useHerald(dialect, LOCAL_DELIVERY)
  let account: CreatedAccount
  let token: string
  let endpointId: string
  let secret: string

  const url = (path: string) => `${account.base}${path}`
  const json = (method: string, path: string, body: unknown) => send(url(path), method, token, JSON.stringify(body))
  const get = async (path: string) => {
    const answer = await send(url(path), 'GET', token)
    expect(answer.status, `GET ${path}: ${describeAnswer(answer)}`).toBe(200)
    return answer.body
  }

  /** Everything a refused write could have touched. */
  const state = async () => ({
    endpoints: await get('/webhooks/endpoints?limit=200'),
    subscriptions: await get('/webhooks/subscriptions?limit=200'),
    events: await get('/webhooks/events?limit=200'),
    deliveries: await get('/webhooks/deliveries?limit=200'),
    eventTypes: await get('/webhooks/event-types'),
    settings: await get('/settings'),
    secret: await get(`/webhooks/endpoints/${endpointId}/secret`),
  })
  let before: Awaited<ReturnType<typeof state>>

  beforeAll(async () => {
    account = await createAccount(h.current, 'webhook-garbage')
    token = await managementToken(account)
    const endpoint = await json('POST', '/webhooks/endpoints', { url: 'http://127.0.0.1:9/hooks', description: 'fixture', metadata: { team: 'core' } })
    expect(endpoint.status, describeAnswer(endpoint)).toBe(201)
    endpointId = endpoint.body.id as string
    const subscription = await json('POST', '/webhooks/subscriptions', { endpoint_id: endpointId, event_types: ['never.published'] })
    expect(subscription.status, describeAnswer(subscription)).toBe(201)
    secret = (await get(`/webhooks/endpoints/${endpointId}/secret`)).secret as string
    before = await state()
  })

  /** Refused writes change nothing: checked after each group, and once more at the end. */
  const expectUnchanged = async () => {
    expect(await state()).toEqual(before)
  }

  function refuses(method: string, path: () => string, cases: readonly Case[]): void {
    for (const { name, body, status = 400, code = 'validation_failed', pointer } of cases) {
      it(`refuses ${name}`, async () => {
        const answer = await json(method, path(), body)
        expectProblem(answer, status, code, name)
        if (pointer) expectPointer(answer, pointer, name)
      })
    }
    it('changed nothing', expectUnchanged)
  }

  describe('malformed bodies on every write route', () => {
    const writes: Array<[string, () => string]> = [
      ['POST', () => '/webhooks/endpoints'],
      ['PATCH', () => `/webhooks/endpoints/${endpointId}`],
      ['POST', () => `/webhooks/endpoints/${endpointId}/secret/rotate`],
      ['POST', () => `/webhooks/endpoints/${endpointId}/recover`],
      ['POST', () => '/webhooks/subscriptions'],
      ['POST', () => '/webhooks/events'],
      ['PATCH', () => '/settings'],
    ]
    const bodies: Array<{ name: string; body: string | Uint8Array; headers?: Record<string, string>; status: number; code: ProblemCode }> = [
      { name: 'invalid JSON', body: '{"url": ', status: 400, code: 'invalid_json' },
      { name: 'JSON with trailing garbage', body: '{} x', status: 400, code: 'invalid_json' },
      { name: 'an empty JSON body', body: '', status: 400, code: 'invalid_json' },
      { name: 'a JSON array', body: '[]', status: 400, code: 'validation_failed' },
      { name: 'a JSON string', body: '"x"', status: 400, code: 'validation_failed' },
      { name: 'JSON null', body: 'null', status: 400, code: 'validation_failed' },
      { name: 'text/plain', body: '{}', headers: { 'content-type': 'text/plain' }, status: 415, code: 'unsupported_media_type' },
      { name: 'a form body', body: 'url=https%3A%2F%2Fexample.com', headers: { 'content-type': 'application/x-www-form-urlencoded' }, status: 415, code: 'unsupported_media_type' },
      { name: 'XML', body: '<url/>', headers: { 'content-type': 'application/xml' }, status: 415, code: 'unsupported_media_type' },
      { name: 'bytes without a content type', body: new TextEncoder().encode('{}'), status: 415, code: 'unsupported_media_type' },
    ]
    for (const [method, path] of writes) {
      it(`${method} ${path().replace(/ep_\w+/, '{id}')} refuses each malformed body`, async () => {
        for (const { name, body, headers, status, code } of bodies) {
          expectProblem(await send(url(path()), method, token, body, headers), status, code, `${method} ${path()} with ${name}`)
        }
      })
    }
    it('changed nothing', expectUnchanged)
  })

  describe('POST /webhooks/endpoints', () => {
    refuses('POST', () => '/webhooks/endpoints', [
      { name: 'an unknown field', body: { url: PUBLIC_URL, colour: 'red' }, pointer: '/body/colour' },
      { name: 'a status at creation', body: { url: PUBLIC_URL, status: 'disabled' }, pointer: '/body/status' },
      { name: 'a missing url', body: { description: 'no url' }, pointer: '/body/url' },
      { name: 'an empty url', body: { url: '' }, pointer: '/body/url' },
      { name: 'a numeric url', body: { url: 42 }, pointer: '/body/url' },
      { name: 'a null url', body: { url: null }, pointer: '/body/url' },
      { name: 'a url over 2048 characters', body: { url: `${PUBLIC_URL}/${'a'.repeat(2100)}` }, pointer: '/body/url' },
      { name: 'a relative url', body: { url: '/hooks' }, pointer: '/body/url' },
      { name: 'a url without a scheme', body: { url: '93.184.215.14/hooks' }, pointer: '/body/url' },
      { name: 'an ftp url', body: { url: 'ftp://93.184.215.14/hooks' }, pointer: '/body/url' },
      { name: 'a javascript: url', body: { url: 'javascript:alert(1)' }, pointer: '/body/url' },
      { name: 'a file: url', body: { url: 'file:///etc/passwd' }, pointer: '/body/url' },
      { name: 'a data: url', body: { url: 'data:text/plain,hello' }, pointer: '/body/url' },
      { name: 'a ws: url', body: { url: 'ws://93.184.215.14/hooks' }, pointer: '/body/url' },
      { name: 'a url with credentials', body: { url: 'https://user:secret@93.184.215.14/hooks' }, pointer: '/body/url' },
      { name: 'a url with a user name only', body: { url: 'https://user@93.184.215.14/hooks' }, pointer: '/body/url' },
      { name: 'a url with a fragment', body: { url: `${PUBLIC_URL}#part` }, pointer: '/body/url' },
      // URL parsing would forget these, so the URL stored would not be the one requested.
      { name: 'a url with an empty userinfo', body: { url: 'https://@93.184.215.14/hooks' }, pointer: '/body/url' },
      { name: 'a url with an empty password', body: { url: 'https://:@93.184.215.14/hooks' }, pointer: '/body/url' },
      { name: 'a url with an empty fragment', body: { url: `${PUBLIC_URL}#` }, pointer: '/body/url' },
      { name: 'a url with a third slash', body: { url: 'https:///93.184.215.14/hooks' }, pointer: '/body/url' },
      { name: 'a url with backslashes', body: { url: 'https:\\\\93.184.215.14\\hooks' }, pointer: '/body/url' },
      { name: 'a url with a backslash in its path', body: { url: 'https://93.184.215.14\\hooks' }, pointer: '/body/url' },
      { name: 'a url with a bad port', body: { url: 'https://93.184.215.14:99999/hooks' }, pointer: '/body/url' },
      { name: 'a secret without whsec_', body: { url: PUBLIC_URL, secret: Buffer.alloc(32, 1).toString('base64') }, pointer: '/body/secret' },
      { name: 'a secret of 16 bytes (too short)', body: { url: PUBLIC_URL, secret: secretOf(16) }, pointer: '/body/secret' },
      { name: 'a secret of 100 bytes (too long)', body: { url: PUBLIC_URL, secret: secretOf(100) }, pointer: '/body/secret' },
      { name: 'a secret over 200 characters', body: { url: PUBLIC_URL, secret: `whsec_${'A'.repeat(250)}` }, pointer: '/body/secret' },
      { name: 'a secret that is not base64', body: { url: PUBLIC_URL, secret: 'whsec_!!!!not-base64-at-all-but-long-enough!!!!' }, pointer: '/body/secret' },
      { name: 'a secret with bad padding', body: { url: PUBLIC_URL, secret: `${secretOf(32)}=` }, pointer: '/body/secret' },
      { name: 'an empty secret', body: { url: PUBLIC_URL, secret: '' }, pointer: '/body/secret' },
      { name: 'a numeric secret', body: { url: PUBLIC_URL, secret: 12345 }, pointer: '/body/secret' },
      { name: 'rate_limit 0', body: { url: PUBLIC_URL, rate_limit: 0 }, pointer: '/body/rate_limit' },
      { name: 'a negative rate_limit', body: { url: PUBLIC_URL, rate_limit: -5 } },
      { name: 'a string rate_limit', body: { url: PUBLIC_URL, rate_limit: '10' } },
      { name: 'a fractional rate_limit', body: { url: PUBLIC_URL, rate_limit: 1.5 } },
      { name: 'a huge rate_limit', body: { url: PUBLIC_URL, rate_limit: 1e12 } },
      { name: 'max_in_flight 0', body: { url: PUBLIC_URL, max_in_flight: 0 }, pointer: '/body/max_in_flight' },
      { name: 'a negative max_in_flight', body: { url: PUBLIC_URL, max_in_flight: -1 }, pointer: '/body/max_in_flight' },
      { name: 'a string max_in_flight', body: { url: PUBLIC_URL, max_in_flight: 'ten' }, pointer: '/body/max_in_flight' },
      { name: 'a huge max_in_flight', body: { url: PUBLIC_URL, max_in_flight: 100_000 }, pointer: '/body/max_in_flight' },
      { name: 'a null max_in_flight', body: { url: PUBLIC_URL, max_in_flight: null }, pointer: '/body/max_in_flight' },
      { name: 'a numeric metadata value', body: { url: PUBLIC_URL, metadata: { a: 1 } }, pointer: '/body/metadata/a' },
      { name: 'a nested metadata value', body: { url: PUBLIC_URL, metadata: { a: { b: 'c' } } }, pointer: '/body/metadata/a' },
      { name: 'a null metadata value', body: { url: PUBLIC_URL, metadata: { a: null } }, pointer: '/body/metadata/a' },
      { name: 'metadata as an array', body: { url: PUBLIC_URL, metadata: ['a'] }, pointer: '/body/metadata' },
      { name: 'metadata with 51 keys', body: { url: PUBLIC_URL, metadata: manyKeys(51) }, pointer: '/body/metadata' },
      { name: 'a metadata key over 64 characters', body: { url: PUBLIC_URL, metadata: { ['k'.repeat(65)]: 'v' } } },
      { name: 'a metadata value over 512 characters', body: { url: PUBLIC_URL, metadata: { a: 'v'.repeat(513) } } },
      { name: 'a description over 1024 characters', body: { url: PUBLIC_URL, description: 'd'.repeat(1025) }, pointer: '/body/description' },
      { name: 'a numeric description', body: { url: PUBLIC_URL, description: 7 }, pointer: '/body/description' },
      { name: 'a body over 32 KiB', body: { url: PUBLIC_URL, metadata: { a: 'v'.repeat(500) }, padding: 'p'.repeat(40 * 1024) }, status: 413, code: 'payload_too_large' },
    ])
  })

  describe('PATCH /webhooks/endpoints/{id}', () => {
    refuses('PATCH', () => `/webhooks/endpoints/${endpointId}`, [
      { name: 'an empty object', body: {} },
      { name: 'an unknown field', body: { colour: 'red' }, pointer: '/body/colour' },
      { name: 'a secret (rotation has its own route)', body: { secret: secretOf(32, 9) }, pointer: '/body/secret' },
      { name: 'an unknown status', body: { status: 'paused' }, pointer: '/body/status' },
      { name: 'an empty status', body: { status: '' }, pointer: '/body/status' },
      { name: 'a null status', body: { status: null }, pointer: '/body/status' },
      { name: 'a disabled_reason', body: { disabled_reason: 'gone' }, pointer: '/body/disabled_reason' },
      { name: 'an empty url', body: { url: '' }, pointer: '/body/url' },
      { name: 'a null url', body: { url: null }, pointer: '/body/url' },
      { name: 'a javascript: url', body: { url: 'javascript:alert(1)' }, pointer: '/body/url' },
      { name: 'a url with credentials', body: { url: 'https://u:p@93.184.215.14/' }, pointer: '/body/url' },
      { name: 'a url with a fragment', body: { url: `${PUBLIC_URL}#x` }, pointer: '/body/url' },
      { name: 'rate_limit 0', body: { rate_limit: 0 }, pointer: '/body/rate_limit' },
      { name: 'a string max_in_flight', body: { max_in_flight: '5' }, pointer: '/body/max_in_flight' },
      { name: 'a null max_in_flight', body: { max_in_flight: null }, pointer: '/body/max_in_flight' },
      { name: 'a null description', body: { description: null }, pointer: '/body/description' },
      { name: 'null metadata', body: { metadata: null }, pointer: '/body/metadata' },
      { name: 'a valid change beside a bad one', body: { description: 'changed', rate_limit: -1 }, pointer: '/body/rate_limit' },
    ])
  })

  describe('rotating a secret and recovering an endpoint', () => {
    refuses('POST', () => `/webhooks/endpoints/${endpointId}/secret/rotate`, [
      { name: 'a secret without whsec_', body: { secret: 'abc' }, pointer: '/body/secret' },
      { name: 'a too short secret', body: { secret: secretOf(8) }, pointer: '/body/secret' },
      { name: 'a too long secret', body: { secret: secretOf(100) }, pointer: '/body/secret' },
      { name: 'a negative overlap', body: { overlap_seconds: -1 }, pointer: '/body/overlap_seconds' },
      { name: 'an overlap over 7 days', body: { overlap_seconds: 7 * 24 * 3600 + 1 }, pointer: '/body/overlap_seconds' },
      { name: 'a string overlap', body: { overlap_seconds: '60' }, pointer: '/body/overlap_seconds' },
      { name: 'an unknown field', body: { overlap: 60 }, pointer: '/body/overlap' },
    ])
    refuses('POST', () => `/webhooks/endpoints/${endpointId}/recover`, [
      { name: 'a missing since', body: {}, pointer: '/body/since' },
      { name: 'a since that is not a date', body: { since: 'yesterday' }, pointer: '/body/since' },
      { name: 'a since without a time', body: { since: '2026-01-01' }, pointer: '/body/since' },
      { name: 'an impossible since', body: { since: '2026-02-30T00:00:00Z' }, pointer: '/body/since' },
      { name: 'a since past the year 9999 in UTC', body: { since: '9999-12-31T23:59:59-23:59' }, pointer: '/body/since' },
      { name: 'a since whose offset has no colon', body: { since: '2026-01-01T00:00:00+0100' }, pointer: '/body/since' },
      { name: 'a numeric since', body: { since: 1_700_000_000 }, pointer: '/body/since' },
      { name: 'an unknown field', body: { since: '2026-01-01T00:00:00Z', status: 'failed' }, pointer: '/body/status' },
    ])
    it('kept the old secret', async () => {
      expect((await get(`/webhooks/endpoints/${endpointId}/secret`)).secret).toBe(secret)
    })
  })

  describe('POST /webhooks/subscriptions', () => {
    const sub = (eventTypes: unknown) => ({ endpoint_id: endpointId, event_types: eventTypes })
    // Built lazily: the endpoint id exists only once the fixture is made.
    const cases = (): Case[] => [
      { name: 'empty event_types', body: sub([]), pointer: '/body/event_types' },
      { name: 'missing event_types', body: { endpoint_id: endpointId }, pointer: '/body/event_types' },
      { name: 'event_types as a string', body: sub('invoice.paid'), pointer: '/body/event_types' },
      { name: 'a numeric event type', body: sub([7]), pointer: '/body/event_types/0' },
      { name: 'an empty event type', body: sub(['']), pointer: '/body/event_types/0' },
      { name: 'a trailing dot (a.)', body: sub(['a.']), pointer: '/body/event_types/0' },
      { name: 'a leading wildcard (*.a)', body: sub(['*.a']), pointer: '/body/event_types/0' },
      { name: 'a glued wildcard (a*)', body: sub(['a*']), pointer: '/body/event_types/0' },
      { name: 'an inner wildcard (a.*.b)', body: sub(['a.*.b']), pointer: '/body/event_types/0' },
      { name: 'a double wildcard (**)', body: sub(['**']), pointer: '/body/event_types/0' },
      { name: 'a leading dot (.a)', body: sub(['.a']), pointer: '/body/event_types/0' },
      { name: 'an empty segment (a..b)', body: sub(['a..b']), pointer: '/body/event_types/0' },
      { name: 'a space inside (a b)', body: sub(['a b']), pointer: '/body/event_types/0' },
      { name: 'a trailing space', body: sub(['invoice.paid ']), pointer: '/body/event_types/0' },
      { name: 'a bad pattern after a good one', body: sub(['invoice.paid', 'a.']), pointer: '/body/event_types/1' },
      { name: 'a type over 130 characters', body: sub(['t'.repeat(131)]), pointer: '/body/event_types/0' },
      { name: 'a type of 129 characters', body: sub(['t'.repeat(129)]), pointer: '/body/event_types/0' },
      { name: '51 event types', body: sub(Array.from({ length: 51 }, (_, i) => `t.${i}`)), pointer: '/body/event_types' },
      { name: 'a missing endpoint_id', body: { event_types: ['*'] }, pointer: '/body/endpoint_id' },
      { name: 'a numeric endpoint_id', body: { endpoint_id: 1, event_types: ['*'] }, pointer: '/body/endpoint_id' },
      { name: 'an endpoint_id over 64 characters', body: { endpoint_id: 'ep_'.padEnd(65, 'A'), event_types: ['*'] }, pointer: '/body/endpoint_id' },
      { name: 'an unknown field', body: { ...sub(['*']), filter: 'x' }, pointer: '/body/filter' },
      { name: 'an unknown, well-formed endpoint id', body: { endpoint_id: 'ep_01JGZ7Q3M8V2X9K4T6N1P5R0SC', event_types: ['*'] }, status: 404, code: 'not_found' },
      { name: 'a subscription id as endpoint id', body: { endpoint_id: 'sub_01JGZ7Q3M8V2X9K4T6N1P5R0SC', event_types: ['*'] }, status: 404, code: 'not_found' },
      { name: 'an SQL-ish endpoint id', body: { endpoint_id: "ep_' OR '1'='1", event_types: ['*'] }, status: 404, code: 'not_found' },
    ]
    it('refuses each malformed subscription', async () => {
      for (const { name, body, status = 400, code = 'validation_failed', pointer } of cases()) {
        const answer = await json('POST', '/webhooks/subscriptions', body)
        expectProblem(answer, status, code, name)
        if (pointer) expectPointer(answer, pointer, name)
      }
    })
    it('changed nothing', expectUnchanged)
  })

  describe('garbage ids in paths', () => {
    const ids: Array<{ name: string; id: string; status: number; code: ProblemCode }> = [
      { name: 'a 300-character id', id: 'x'.repeat(300), status: 404, code: 'not_found' },
      { name: 'a 100-character id', id: 'x'.repeat(100), status: 400, code: 'validation_failed' },
      { name: 'an id with the wrong prefix', id: 'acct_01JGZ7Q3M8V2X9K4T6N1P5R0SC', status: 404, code: 'not_found' },
      { name: 'an SQL-ish id', id: encodeURIComponent("x' OR '1'='1"), status: 404, code: 'not_found' },
      { name: 'an id with a NUL', id: 'ep_%00', status: 404, code: 'not_found' },
      { name: 'a non-ASCII id', id: encodeURIComponent('ép_ü'), status: 404, code: 'not_found' },
      { name: 'a malformed percent-encoding', id: '%E0%A4%A', status: 400, code: 'bad_request' },
    ]
    const routes: Array<[string, (id: string) => string, unknown?]> = [
      ['GET', (id) => `/webhooks/endpoints/${id}`],
      ['PATCH', (id) => `/webhooks/endpoints/${id}`, { description: 'x' }],
      ['DELETE', (id) => `/webhooks/endpoints/${id}`],
      ['GET', (id) => `/webhooks/endpoints/${id}/secret`],
      ['POST', (id) => `/webhooks/endpoints/${id}/secret/rotate`, {}],
      ['POST', (id) => `/webhooks/endpoints/${id}/recover`, { since: '2026-01-01T00:00:00Z' }],
      ['GET', (id) => `/webhooks/subscriptions/${id}`],
      ['DELETE', (id) => `/webhooks/subscriptions/${id}`],
      ['GET', (id) => `/webhooks/events/${id}`],
      ['GET', (id) => `/webhooks/deliveries/${id}`],
      ['POST', (id) => `/webhooks/deliveries/${id}/retry`],
      ['GET', (id) => `/webhooks/jobs/${id}`],
    ]
    for (const [method, path, body] of routes) {
      it(`${method} ${path('{id}')} answers each garbage id with a 4xx`, async () => {
        for (const { name, id, status, code } of ids) {
          const answer = await send(url(path(id)), method, token, body === undefined ? undefined : JSON.stringify(body))
          expectProblem(answer, status, code, `${method} ${path('{id}')} with ${name}`)
        }
      })
    }
    it('changed nothing', expectUnchanged)
  })

  describe('POST /webhooks/events', () => {
    refuses('POST', () => '/webhooks/events', [
      { name: 'a reserved oauth. type', body: { type: 'oauth.client.created', data: {} }, pointer: '/body/type' },
      { name: 'a made-up oauth. type', body: { type: 'oauth.custom', data: {} }, pointer: '/body/type' },
      { name: 'a reserved webhook. type', body: { type: 'webhook.delivery.failed', data: {} }, pointer: '/body/type' },
      { name: 'a made-up webhook. type', body: { type: 'webhook.ping', data: {} }, pointer: '/body/type' },
      { name: 'a reserved type in capitals', body: { type: 'OAUTH.client.created', data: {} }, pointer: '/body/type' },
      { name: 'a reserved prefix in mixed case', body: { type: 'Webhook.ping', data: {} }, pointer: '/body/type' },
      { name: 'the bare oauth type', body: { type: 'oauth', data: {} }, pointer: '/body/type' },
      { name: 'the bare webhook type', body: { type: 'webhook', data: {} }, pointer: '/body/type' },
      { name: 'a bare reserved type in capitals', body: { type: 'OAuth', data: {} }, pointer: '/body/type' },
      { name: 'an empty type', body: { type: '', data: {} }, pointer: '/body/type' },
      { name: 'a type with a space', body: { type: 'invoice paid', data: {} }, pointer: '/body/type' },
      { name: 'a type with a trailing dot', body: { type: 'invoice.', data: {} }, pointer: '/body/type' },
      { name: 'a type with an empty segment', body: { type: 'invoice..paid', data: {} }, pointer: '/body/type' },
      { name: 'a wildcard type', body: { type: 'invoice.*', data: {} }, pointer: '/body/type' },
      { name: 'the * type', body: { type: '*', data: {} }, pointer: '/body/type' },
      { name: 'a non-ASCII type', body: { type: 'facture.payée', data: {} }, pointer: '/body/type' },
      { name: 'a type over 128 characters', body: { type: 't'.repeat(129), data: {} }, pointer: '/body/type' },
      { name: 'a numeric type', body: { type: 5, data: {} }, pointer: '/body/type' },
      { name: 'a missing type', body: { data: {} }, pointer: '/body/type' },
      { name: 'data as an array', body: { type: 'invoice.paid', data: [1, 2] }, pointer: '/body/data' },
      { name: 'data as a string', body: { type: 'invoice.paid', data: 'paid' }, pointer: '/body/data' },
      { name: 'data as null', body: { type: 'invoice.paid', data: null }, pointer: '/body/data' },
      { name: 'data as a number', body: { type: 'invoice.paid', data: 42 }, pointer: '/body/data' },
      { name: 'missing data', body: { type: 'invoice.paid' }, pointer: '/body/data' },
      { name: 'an empty idempotency_key', body: { type: 'invoice.paid', data: {}, idempotency_key: '' }, pointer: '/body/idempotency_key' },
      { name: 'an idempotency_key over 255 characters', body: { type: 'invoice.paid', data: {}, idempotency_key: 'k'.repeat(256) }, pointer: '/body/idempotency_key' },
      { name: 'a numeric idempotency_key', body: { type: 'invoice.paid', data: {}, idempotency_key: 7 }, pointer: '/body/idempotency_key' },
      { name: 'an unknown field', body: { type: 'invoice.paid', data: {}, id: 'evt_01JGZ7Q3M8V2X9K4T6N1P5R0SE' }, pointer: '/body/id' },
      { name: 'a body over 256 KiB', body: { type: 'invoice.paid', data: { blob: 'x'.repeat(260 * 1024) } }, status: 413, code: 'payload_too_large' },
    ])
    it('still lists no custom event type', async () => {
      const types = (await get('/webhooks/event-types')).data as Array<{ custom: boolean }>
      expect(types.filter((type) => type.custom)).toEqual([])
    })
  })

  describe('list queries', () => {
    const lists: Array<{ name: string; path: string; pointer?: string }> = [
      { name: 'an unknown delivery status', path: '/webhooks/deliveries?status=delivered', pointer: '/querystring/status' },
      { name: 'an empty delivery status', path: '/webhooks/deliveries?status=', pointer: '/querystring/status' },
      { name: 'a since that is not a date', path: '/webhooks/deliveries?since=yesterday', pointer: '/querystring/since' },
      { name: 'a since without a time zone', path: '/webhooks/deliveries?since=2026-01-01T00:00:00', pointer: '/querystring/since' },
      { name: 'an impossible since', path: '/webhooks/deliveries?since=2026-13-45T00:00:00Z', pointer: '/querystring/since' },
      { name: 'an epoch-number since', path: '/webhooks/deliveries?since=1700000000', pointer: '/querystring/since' },
      { name: 'an until that is not a date', path: '/webhooks/deliveries?until=tomorrow', pointer: '/querystring/until' },
      { name: 'limit 0', path: '/webhooks/deliveries?limit=0', pointer: '/querystring/limit' },
      { name: 'a negative limit', path: '/webhooks/deliveries?limit=-1', pointer: '/querystring/limit' },
      { name: 'limit 201', path: '/webhooks/deliveries?limit=201', pointer: '/querystring/limit' },
      { name: 'a fractional limit', path: '/webhooks/deliveries?limit=1.5', pointer: '/querystring/limit' },
      { name: 'a word as limit', path: '/webhooks/deliveries?limit=ten', pointer: '/querystring/limit' },
      { name: 'a forged cursor', path: '/webhooks/deliveries?cursor=not-a-cursor!', pointer: '/querystring/cursor' },
      { name: 'a cursor of control bytes', path: `/webhooks/deliveries?cursor=${Buffer.from('\u0001\u0002').toString('base64url')}`, pointer: '/querystring/cursor' },
      { name: 'a padded cursor', path: `/webhooks/deliveries?cursor=${Buffer.from('dlv_1').toString('base64')}==`, pointer: '/querystring/cursor' },
      { name: 'a cursor over 512 characters', path: `/webhooks/deliveries?cursor=${'A'.repeat(600)}`, pointer: '/querystring/cursor' },
      { name: 'an endpoint_id over 64 characters', path: `/webhooks/deliveries?endpoint_id=${'e'.repeat(65)}`, pointer: '/querystring/endpoint_id' },
      { name: 'an event_type over 128 characters', path: `/webhooks/deliveries?event_type=${'t'.repeat(129)}`, pointer: '/querystring/event_type' },
      { name: 'limit 0 on events', path: '/webhooks/events?limit=0', pointer: '/querystring/limit' },
      { name: 'a forged cursor on events', path: '/webhooks/events?cursor=%%%', pointer: '/querystring/cursor' },
      { name: 'a word as limit on endpoints', path: '/webhooks/endpoints?limit=all', pointer: '/querystring/limit' },
      { name: 'a forged cursor on subscriptions', path: '/webhooks/subscriptions?cursor=zz!', pointer: '/querystring/cursor' },
    ]
    it('refuses each malformed query with 400 validation_failed', async () => {
      for (const { name, path, pointer } of lists) {
        const answer = await send(url(path), 'GET', token)
        expectProblem(answer, 400, 'validation_failed', name)
        if (pointer) expectPointer(answer, pointer, name)
      }
    })
  })

  describe('PATCH /settings', () => {
    refuses('PATCH', () => '/settings', [
      { name: 'an empty object', body: {} },
      { name: 'an unknown field', body: { webhook_retries: 3 }, pointer: '/body/webhook_retries' },
      { name: 'an empty retry schedule', body: { webhook_retry_schedule: [] }, pointer: '/body/webhook_retry_schedule' },
      { name: 'a retry schedule of 21 delays', body: { webhook_retry_schedule: Array.from({ length: 21 }, () => 60) }, pointer: '/body/webhook_retry_schedule' },
      { name: 'a zero delay', body: { webhook_retry_schedule: [5, 0] }, pointer: '/body/webhook_retry_schedule/1' },
      { name: 'a negative delay', body: { webhook_retry_schedule: [-5] }, pointer: '/body/webhook_retry_schedule/0' },
      { name: 'a delay over a day', body: { webhook_retry_schedule: [86_401] }, pointer: '/body/webhook_retry_schedule/0' },
      { name: 'a fractional delay', body: { webhook_retry_schedule: [1.5] }, pointer: '/body/webhook_retry_schedule/0' },
      { name: 'a string delay', body: { webhook_retry_schedule: ['5'] }, pointer: '/body/webhook_retry_schedule/0' },
      { name: 'a null delay', body: { webhook_retry_schedule: [null] }, pointer: '/body/webhook_retry_schedule/0' },
      { name: 'a schedule that is a number', body: { webhook_retry_schedule: 5 }, pointer: '/body/webhook_retry_schedule' },
      { name: 'retention of 0 days', body: { webhook_retention_days: 0 }, pointer: '/body/webhook_retention_days' },
      { name: 'retention of 366 days', body: { webhook_retention_days: 366 }, pointer: '/body/webhook_retention_days' },
      { name: 'a negative retention', body: { webhook_retention_days: -1 }, pointer: '/body/webhook_retention_days' },
      { name: 'a fractional retention', body: { webhook_retention_days: 1.5 }, pointer: '/body/webhook_retention_days' },
      { name: 'a string retention', body: { webhook_retention_days: '30' }, pointer: '/body/webhook_retention_days' },
      { name: 'disable_after of 0', body: { webhook_disable_after: 0 }, pointer: '/body/webhook_disable_after' },
      { name: 'disable_after under an hour', body: { webhook_disable_after: 3599 }, pointer: '/body/webhook_disable_after' },
      { name: 'disable_after over 30 days', body: { webhook_disable_after: 30 * 86_400 + 1 }, pointer: '/body/webhook_disable_after' },
      { name: 'a null disable_after', body: { webhook_disable_after: null }, pointer: '/body/webhook_disable_after' },
      { name: 'a valid change beside a bad one', body: { webhook_retention_days: 7, webhook_retry_schedule: [] }, pointer: '/body/webhook_retry_schedule' },
    ])
  })

  describe('text that a database may not store', () => {
    // PostgreSQL can't store NUL in text; SQLite can. Either way the answer must be the same 4xx and no row.
    refuses('POST', () => '/webhooks/endpoints', [
      { name: 'a description with a NUL', body: { url: PUBLIC_URL, description: 'a\u0000b' }, code: 'validation_failed' },
      { name: 'a metadata value with a NUL', body: { url: PUBLIC_URL, metadata: { a: 'x\u0000' } }, code: 'validation_failed' },
      { name: 'a metadata key with a NUL', body: { url: PUBLIC_URL, metadata: { 'a\u0000': 'x' } }, code: 'validation_failed' },
      { name: 'a url with a NUL', body: { url: `${PUBLIC_URL}\u0000` }, code: 'validation_failed', pointer: '/body/url' },
      // URL parsing would drop these, so the endpoint would be stored with one URL and called at another.
      { name: 'a url with a tab inside', body: { url: 'https://93.184.\t215.14/hooks' }, pointer: '/body/url' },
      { name: 'a url with a newline inside', body: { url: 'https://93.184.215.14/ho\noks' }, pointer: '/body/url' },
      { name: 'a url with a leading space', body: { url: ` ${PUBLIC_URL}` }, pointer: '/body/url' },
      { name: 'a url with a trailing space', body: { url: `${PUBLIC_URL} ` }, pointer: '/body/url' },
    ])
    refuses('PATCH', () => `/webhooks/endpoints/${endpointId}`, [
      { name: 'a description with a NUL', body: { description: '\u0000' }, pointer: '/body/description' },
      { name: 'a url with a NUL', body: { url: `${PUBLIC_URL}\u0000` }, pointer: '/body/url' },
    ])
    refuses('POST', () => '/webhooks/events', [
      { name: 'an idempotency_key with a NUL', body: { type: 'invoice.paid', data: {}, idempotency_key: 'k\u0000' }, code: 'validation_failed' },
      // Both databases would store U+FFFD in its place: the key would no longer match itself.
      { name: 'an idempotency_key with a lone surrogate', body: { type: 'invoice.paid', data: {}, idempotency_key: 'k\ud800' }, code: 'invalid_json' },
      { name: 'data with a lone surrogate in a key', body: { type: 'invoice.paid', data: { '\udc00': 1 } }, code: 'invalid_json' },
      { name: 'data nested deeper than 128 levels', body: { type: 'invoice.paid', data: nested(128) }, code: 'invalid_json' },
    ])
    refuses('POST', () => '/webhooks/endpoints', [{ name: 'a description with a lone surrogate', body: { url: PUBLIC_URL, description: 'x\udc00y' }, code: 'invalid_json' }])
  })

  describe('filters a database may not store', () => {
    it('refuses a NUL in a list filter with 400 validation_failed on both dialects, pointing at the filter', async () => {
      const filters: Array<[string, string]> = [
        ['/webhooks/deliveries?endpoint_id=%00', 'endpoint_id'],
        ['/webhooks/deliveries?event_type=%00', 'event_type'],
        ['/webhooks/events?type=a%00', 'type'],
        ['/webhooks/subscriptions?endpoint_id=%00', 'endpoint_id'],
      ]
      for (const [path, filter] of filters) {
        const answer = await send(url(path), 'GET', token)
        expectProblem(answer, 400, 'validation_failed', path)
        expectPointer(answer, `/querystring/${filter}`, path)
      }
    })
  })

  afterAll(() => {
    // Every refusal above was a 4xx: nothing reached the "unhandled error" path.
    expect(h.current.logs.filter((line) => line.includes('unhandled error'))).toEqual([])
  })
})
