import { beforeAll, describe, expect, it } from 'vitest'
import { PROBLEMS, type ProblemCode, problemType } from '../../src/platform/http/problems.js'
import type { DB } from '../../src/platform/storage/schema.js'
import { type CreatedAccount, forEachDialect, OPERATOR_TOKEN, type TestHerald, useHerald } from '../support/herald.js'
import { basicAuth, createAccount, managementToken } from '../support/http.js'
import { exchange, type RawAnswer } from '../support/raw-http.js'

/**
 * Garbage in, a clear 4xx out: malformed input to the operator API, the management API and the token endpoint
 * is answered with an RFC 9457 problem (management/operator) or an RFC 6749 error object (token endpoint),
 * never a 500, and nothing is half-written.
 */

interface Answer {
  status: number
  headers: Headers
  body: Record<string, unknown>
  text: string
}

interface SendOptions {
  /** A string (fetch adds text/plain unless a content-type is given) or bytes (no content-type added). */
  body?: string | Uint8Array
  headers?: Record<string, string>
  token?: string
}

/** Sends exactly these bytes; the answer body is parsed when it is JSON, and kept as text when it is not. */
async function send(url: string, method: string, options: SendOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers }
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  const response = await fetch(url, { method, headers, body: options.body })
  const text = await response.text()
  let body: Record<string, unknown> = {}
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {}
  } catch {
    // Not JSON: the assertions on content-type and fields will say so.
  }
  return { status: response.status, headers: response.headers, body, text }
}

const JSON_TYPE = { 'content-type': 'application/json' }
const FORM_TYPE = { 'content-type': 'application/x-www-form-urlencoded' }

function describeAnswer(answer: Answer): string {
  return `${answer.status} ${answer.headers.get('content-type') ?? '(no content-type)'} ${answer.text.slice(0, 400)}`
}

/** An RFC 9457 document with one of Herald's stable codes, whose `status` is the HTTP status. */
/** Answers read off a raw connection: one problem document, and the connection closed after it. */
function expectClosingProblem(answers: RawAnswer[], status: number, code: ProblemCode): void {
  expect(answers).toHaveLength(1)
  const [answer] = answers
  expectProblem({ status: answer!.status, headers: new Headers(answer!.headers), body: JSON.parse(answer!.body) as Record<string, unknown>, text: answer!.body }, status, code)
  expect(answer!.headers.connection).toBe('close')
}

function expectProblem(answer: Answer, status: number | 'any4xx', code?: ProblemCode | readonly ProblemCode[]): void {
  const where = describeAnswer(answer)
  if (status === 'any4xx') {
    expect(answer.status, where).toBeGreaterThanOrEqual(400)
    expect(answer.status, where).toBeLessThan(500)
  } else {
    expect(answer.status, where).toBe(status)
  }
  expect(answer.headers.get('content-type'), where).toMatch(/^application\/problem\+json(;|$)/)
  const actual = answer.body.code as ProblemCode
  expect(Object.keys(PROBLEMS), where).toContain(actual)
  if (typeof code === 'string') expect(actual, where).toBe(code)
  else if (code !== undefined) expect(code, where).toContain(actual)
  expect(answer.body, where).toMatchObject({ type: problemType(actual), title: PROBLEMS[actual].title, status: answer.status, code: actual })
  expect(PROBLEMS[actual].status, where).toBe(answer.status)
}

/** RFC 6749 §5.2: `error_description` is restricted to printable ASCII without `"` and `\`. */
const ERROR_DESCRIPTION = /^[\x20-\x21\x23-\x5B\x5D-\x7E]*$/

/** An RFC 6749 error object, never cached. */
function expectOAuthError(answer: Answer, status: number, error: string): void {
  const where = describeAnswer(answer)
  expect(answer.status, where).toBe(status)
  expect(answer.headers.get('content-type'), where).toMatch(/^application\/json(;|$)/)
  expect(answer.body, where).toEqual({ error, error_description: expect.any(String) })
  expect(answer.body.error_description, where).toMatch(ERROR_DESCRIPTION)
  expect(answer.headers.get('cache-control'), where).toBe('no-store')
}

/** RFC 6749 §5.2: a client that tried HTTP Basic and failed gets 401 with a Basic challenge. */
function expectBasicChallenge(answer: Answer): void {
  expectOAuthError(answer, 401, 'invalid_client')
  expect(answer.headers.get('www-authenticate'), describeAnswer(answer)).toMatch(/^Basic /)
}

const TABLES = ['accounts', 'account_settings', 'signing_keys', 'clients', 'scopes', 'events', 'token_revocations'] as const satisfies ReadonlyArray<keyof DB>

type Counts = Record<(typeof TABLES)[number] | 'revoked_keys', number>

async function countRows(h: TestHerald): Promise<Counts> {
  const { db } = h.herald.database
  const counts = {} as Counts
  for (const table of TABLES) {
    const row = await db.selectFrom(table).select(({ fn }) => fn.countAll().as('n')).executeTakeFirstOrThrow()
    counts[table] = Number(row.n)
  }
  const revoked = await db
    .selectFrom('signing_keys')
    .select(({ fn }) => fn.countAll().as('n'))
    .where('revoked_at', 'is not', null)
    .executeTakeFirstOrThrow()
  counts.revoked_keys = Number(revoked.n)
  return counts
}

async function countAccounts(h: TestHerald): Promise<number> {
  const row = await h.herald.database.db
    .selectFrom('accounts')
    .select(({ fn }) => fn.countAll().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

const base64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64')

forEachDialect((dialect) => {
  const h = useHerald(dialect)
  let account: CreatedAccount
  let token: string
  let before: Counts

  beforeAll(async () => {
    account = await createAccount(h.current, 'garbage-fixture')
    token = await managementToken(account, 'herald:keys:write')
    before = await countRows(h.current)
  })

  const operator = { authorization: `Bearer ${OPERATOR_TOKEN}` }

  describe(`operator API: POST /accounts with garbage (${dialect})`, () => {
    let accountsBefore: number
    beforeAll(async () => {
      accountsBefore = await countAccounts(h.current)
    })

    const post = (body: string | Uint8Array | undefined, headers: Record<string, string> = JSON_TYPE) =>
      send(`${h.current.origin}/accounts`, 'POST', { body, headers: { ...operator, ...headers } })

    const badBodies: Array<{ name: string; body: string; status: number; code: ProblemCode }> = [
      { name: 'invalid JSON', body: '{bad', status: 400, code: 'invalid_json' },
      { name: 'truncated JSON', body: '{"name":"x"', status: 400, code: 'invalid_json' },
      { name: 'trailing garbage after JSON', body: '{"name":"x"} trailing', status: 400, code: 'invalid_json' },
      { name: 'an empty body', body: '', status: 400, code: 'invalid_json' },
      { name: 'a JSON array', body: '[{"name":"x"}]', status: 400, code: 'validation_failed' },
      { name: 'a JSON string', body: '"x"', status: 400, code: 'validation_failed' },
      { name: 'a JSON number', body: '42', status: 400, code: 'validation_failed' },
      { name: 'JSON null', body: 'null', status: 400, code: 'validation_failed' },
      { name: 'JSON true', body: 'true', status: 400, code: 'validation_failed' },
      { name: 'an empty object', body: '{}', status: 400, code: 'validation_failed' },
      { name: 'an empty name', body: '{"name":""}', status: 400, code: 'validation_failed' },
      { name: 'a whitespace-only name', body: '{"name":"   "}', status: 400, code: 'validation_failed' },
      { name: 'a tabs-and-newlines name', body: '{"name":"\\t\\n\\r"}', status: 400, code: 'validation_failed' },
      { name: 'a 201-character name', body: JSON.stringify({ name: 'n'.repeat(201) }), status: 400, code: 'validation_failed' },
      { name: 'a 4000-character name (under the body limit)', body: JSON.stringify({ name: 'n'.repeat(4000) }), status: 400, code: 'validation_failed' },
      // 10,000 characters is over the route's 4 KiB body limit, so it never reaches the schema.
      { name: 'a 10,000-character name', body: JSON.stringify({ name: 'n'.repeat(10_000) }), status: 413, code: 'payload_too_large' },
      { name: 'a numeric name', body: '{"name":42}', status: 400, code: 'validation_failed' },
      { name: 'a boolean name', body: '{"name":true}', status: 400, code: 'validation_failed' },
      { name: 'a null name', body: '{"name":null}', status: 400, code: 'validation_failed' },
      { name: 'an array name', body: '{"name":["x"]}', status: 400, code: 'validation_failed' },
      { name: 'an object name', body: '{"name":{"first":"x"}}', status: 400, code: 'validation_failed' },
      { name: 'a name containing a NUL character', body: '{"name":"a\\u0000b"}', status: 400, code: 'validation_failed' },
      { name: 'a 100 KiB body', body: JSON.stringify({ name: 'x', padding: 'p'.repeat(100 * 1024) }), status: 413, code: 'payload_too_large' },
      { name: 'a 100 KiB name', body: JSON.stringify({ name: 'n'.repeat(100 * 1024) }), status: 413, code: 'payload_too_large' },
      // Refused as it is parsed, before any schema sees it (see MAX_JSON_DEPTH).
      { name: 'deeply nested arrays', body: `${'['.repeat(1000)}${']'.repeat(1000)}`, status: 400, code: 'invalid_json' },
    ]

    for (const { name, body, status, code } of badBodies) {
      it(`refuses ${name} with ${status} ${code}`, async () => {
        expectProblem(await post(body), status, code)
      })
    }

    it('names an unknown field in the errors pointer', async () => {
      const answer = await post('{"name":"x","admin":true}')
      expectProblem(answer, 400, 'validation_failed')
      expect(answer.body.errors, describeAnswer(answer)).toEqual(
        expect.arrayContaining([expect.objectContaining({ pointer: '/body/admin', message: expect.any(String) })]),
      )
    })

    it('points at the name when the name is invalid', async () => {
      const answer = await post('{"name":""}')
      expectProblem(answer, 400, 'validation_failed')
      expect(answer.body.errors, describeAnswer(answer)).toEqual(expect.arrayContaining([expect.objectContaining({ pointer: '/body/name' })]))
    })

    const poisoned: Array<{ name: string; body: string }> = [
      { name: '__proto__ at the top level', body: '{"name":"x","__proto__":{"admin":true}}' },
      { name: '__proto__ as the only key', body: '{"__proto__":{"name":"x"}}' },
      { name: 'constructor.prototype', body: '{"name":"x","constructor":{"prototype":{"admin":true}}}' },
      { name: 'a plain constructor key', body: '{"name":"x","constructor":"y"}' },
      { name: 'a nested __proto__', body: '{"name":{"__proto__":{"length":1}}}' },
    ]
    for (const { name, body } of poisoned) {
      it(`refuses JSON with ${name} with a 4xx problem`, async () => {
        expectProblem(await post(body), 400, ['invalid_json', 'validation_failed', 'bad_request'])
      })
    }

    const mediaTypes: Array<{ name: string; body: string | Uint8Array; headers: Record<string, string> }> = [
      { name: 'text/plain', body: '{"name":"x"}', headers: { 'content-type': 'text/plain' } },
      { name: 'application/x-www-form-urlencoded', body: 'name=x', headers: FORM_TYPE },
      { name: 'application/x-www-form-urlencoded with a repeated field', body: 'name=a&name=b', headers: FORM_TYPE },
      { name: 'application/xml', body: '<name>x</name>', headers: { 'content-type': 'application/xml' } },
      { name: 'multipart/form-data', body: '--b\r\ncontent-disposition: form-data; name="name"\r\n\r\nx\r\n--b--\r\n', headers: { 'content-type': 'multipart/form-data; boundary=b' } },
      { name: 'no content-type at all', body: new TextEncoder().encode('{"name":"x"}'), headers: {} },
    ]
    for (const { name, body, headers } of mediaTypes) {
      it(`refuses a body sent as ${name} (415 or 400, never created)`, async () => {
        expectProblem(await post(body, headers), 'any4xx', ['unsupported_media_type', 'invalid_json', 'validation_failed'])
      })
    }

    it('refuses garbage without the operator token as 401 invalid_token, before reading the body', async () => {
      const answer = await send(`${h.current.origin}/accounts`, 'POST', { body: '{bad', headers: { ...JSON_TYPE, authorization: 'Bearer wrong' } })
      expectProblem(answer, 401, 'invalid_token')
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/)
    })

    it('left the accounts table as it was', async () => {
      expect(await countAccounts(h.current)).toBe(accountsBefore)
    })
  })

  describe(`operator API: PATCH and GET /accounts/{id} with garbage (${dialect})`, () => {
    const patch = (id: string, body: string) =>
      send(`${h.current.origin}/accounts/${id}`, 'PATCH', { body, headers: { ...operator, ...JSON_TYPE } })

    const badStatuses = [
      '{"status":"deleted"}',
      '{"status":"DISABLED"}',
      '{"status":""}',
      '{"status":null}',
      '{"status":1}',
      '{"status":true}',
      '{"status":["disabled"]}',
      '{"status":{"value":"disabled"}}',
      '{}',
      '{"status":"disabled","name":"renamed"}',
      '[]',
      '"disabled"',
    ]
    for (const body of badStatuses) {
      it(`refuses ${body} with 400 validation_failed`, async () => {
        expectProblem(await patch(account.id, body), 400, 'validation_failed')
      })
    }

    it('refuses invalid JSON and an empty body with 400 invalid_json', async () => {
      expectProblem(await patch(account.id, '{"status":'), 400, 'invalid_json')
      expectProblem(await patch(account.id, ''), 400, 'invalid_json')
    })

    it('refuses a body over the route limit with 413', async () => {
      expectProblem(await patch(account.id, JSON.stringify({ status: 'disabled', pad: 'p'.repeat(100 * 1024) })), 413, 'payload_too_large')
    })

    it('left the account active and untouched', async () => {
      const answer = await send(`${h.current.origin}/accounts/${account.id}`, 'GET', { headers: operator })
      expect(answer.status, describeAnswer(answer)).toBe(200)
      expect(answer.body).toMatchObject({ id: account.id, status: 'active' })
      expect(answer.body.updated_at).toBe(answer.body.created_at)
    })

    it('answers 404 not_found for an unknown account id', async () => {
      expectProblem(await patch('acct_nope', '{"status":"disabled"}'), 404, 'not_found')
      expectProblem(await send(`${h.current.origin}/accounts/acct_nope`, 'GET', { headers: operator }), 404, 'not_found')
    })

    const oddIds: Array<{ name: string; id: string; status: number | 'any4xx'; code?: ProblemCode | readonly ProblemCode[] }> = [
      { name: 'a NUL byte', id: '%00', status: 404, code: 'not_found' },
      { name: 'a NUL byte inside an id', id: 'acct_%00x', status: 404, code: 'not_found' },
      { name: 'an encoded ../', id: '..%2F', status: 404 },
      { name: 'an encoded ../../etc/passwd', id: '..%2F..%2Fetc%2Fpasswd', status: 404 },
      { name: 'a space', id: '%20', status: 404, code: 'not_found' },
      { name: 'a right-to-left override', id: 'acct_%E2%80%AE', status: 404, code: 'not_found' },
      { name: 'an emoji', id: '%F0%9F%92%A9', status: 404, code: 'not_found' },
      { name: 'a quote and a backslash', id: '%22%5C', status: 404, code: 'not_found' },
      { name: 'SQL', id: encodeURIComponent("' OR '1'='1"), status: 404, code: 'not_found' },
      { name: '65 characters (over the schema limit)', id: 'a'.repeat(65), status: 400, code: 'validation_failed' },
      { name: '10,000 characters', id: 'a'.repeat(10_000), status: 'any4xx' },
      { name: 'a malformed percent-encoding (%zz)', id: '%zz', status: 400 },
      { name: 'a percent-encoded invalid UTF-8 byte (%FF)', id: '%FF', status: 'any4xx' },
    ]
    for (const { name, id, status, code } of oddIds) {
      it(`PATCH with an id of ${name} is a 4xx problem, not a 500`, async () => {
        expectProblem(await patch(id, '{"status":"disabled"}'), status, code)
      })
      it(`GET with an id of ${name} is a 4xx problem, not a 500`, async () => {
        expectProblem(await send(`${h.current.origin}/accounts/${id}`, 'GET', { headers: operator }), status, code)
      })
    }
  })

  describe(`operator API: GET /accounts with garbage paging (${dialect})`, () => {
    const list = (query: string) => send(`${h.current.origin}/accounts?${query}`, 'GET', { headers: operator })

    const badQueries = [
      'limit=0',
      'limit=-1',
      'limit=abc',
      'limit=100000',
      'limit=1.5',
      'limit=1e3',
      'limit=',
      'limit=1&limit=2',
      'limit=%00',
      'cursor=garbage',
      'cursor=',
      'cursor=%00',
      'cursor=!!!',
      `cursor=${'A'.repeat(513)}`,
      'cursor=a&cursor=b',
    ]
    for (const query of badQueries) {
      it(`refuses ?${query.slice(0, 40)} with 400 validation_failed`, async () => {
        expectProblem(await list(query), 400, 'validation_failed')
      })
    }

    it('answers a well-formed but forged cursor (one decoding to text with a NUL) without a 500', async () => {
      const forged = Buffer.from('\u0000acct', 'utf8').toString('base64url')
      const answer = await list(`cursor=${forged}`)
      if (answer.status !== 200) expectProblem(answer, 400, 'validation_failed')
    })

    it('still lists with a sane query', async () => {
      const answer = await list('limit=1')
      expect(answer.status, describeAnswer(answer)).toBe(200)
      expect(answer.body.data).toHaveLength(1)
    })
  })

  describe(`token endpoint with garbage (${dialect})`, () => {
    const tokens = (options: SendOptions) => send(`${account.base}/oauth/tokens`, 'POST', options)
    const basic = () => basicAuth(account.clientId, account.clientSecret)
    const form = (body: string, extra: Record<string, string> = {}) =>
      tokens({ body, headers: { ...FORM_TYPE, authorization: basic(), ...extra } })

    it('issues a token for a well-formed request (the control)', async () => {
      const answer = await form('grant_type=client_credentials')
      expect(answer.status, describeAnswer(answer)).toBe(200)
      expect(answer.headers.get('cache-control')).toBe('no-store')
    })

    it('refuses a JSON body with 400 invalid_request', async () => {
      expectOAuthError(await tokens({ body: '{"grant_type":"client_credentials"}', headers: { ...JSON_TYPE, authorization: basic() } }), 400, 'invalid_request')
    })

    it('refuses invalid JSON with 400 invalid_request', async () => {
      expectOAuthError(await tokens({ body: '{bad', headers: { ...JSON_TYPE, authorization: basic() } }), 400, 'invalid_request')
    })

    it('refuses JSON with __proto__ with 400 invalid_request', async () => {
      expectOAuthError(
        await tokens({ body: '{"grant_type":"client_credentials","__proto__":{"x":1}}', headers: { ...JSON_TYPE, authorization: basic() } }),
        400,
        'invalid_request',
      )
    })

    const otherTypes: Array<{ name: string; body: string | Uint8Array | undefined; headers: Record<string, string> }> = [
      { name: 'no body and no content-type', body: undefined, headers: {} },
      { name: 'an empty form body', body: '', headers: FORM_TYPE },
      { name: 'text/plain', body: 'grant_type=client_credentials', headers: { 'content-type': 'text/plain' } },
      { name: 'multipart/form-data', body: '--b\r\ncontent-disposition: form-data; name="grant_type"\r\n\r\nclient_credentials\r\n--b--\r\n', headers: { 'content-type': 'multipart/form-data; boundary=b' } },
      { name: 'no content-type with a body', body: new TextEncoder().encode('grant_type=client_credentials'), headers: {} },
      { name: 'an empty JSON body', body: '', headers: JSON_TYPE },
    ]
    for (const { name, body, headers } of otherTypes) {
      it(`refuses ${name} with 400 invalid_request`, async () => {
        expectOAuthError(await tokens({ body, headers: { ...headers, authorization: basic() } }), 400, 'invalid_request')
      })
    }

    const invalidRequests: Array<{ name: string; body: string }> = [
      { name: 'a missing grant_type', body: 'scope=herald%3Akeys%3Awrite' },
      { name: 'an empty grant_type (RFC 6749 §3.1: treated as omitted)', body: 'grant_type=' },
      { name: 'a repeated grant_type', body: 'grant_type=client_credentials&grant_type=client_credentials' },
      { name: 'a repeated scope', body: 'grant_type=client_credentials&scope=herald%3Akeys%3Awrite&scope=herald%3Akeys%3Awrite' },
      { name: 'a repeated client_id', body: `grant_type=client_credentials&client_id=x&client_id=y` },
      { name: 'a repeated empty name', body: '=&=' },
    ]
    for (const { name, body } of invalidRequests) {
      it(`refuses ${name} with 400 invalid_request`, async () => {
        expectOAuthError(await form(body), 400, 'invalid_request')
      })
    }

    it('refuses a repeated parameter even from an unauthenticated client', async () => {
      expectOAuthError(await tokens({ body: 'grant_type=a&grant_type=b', headers: FORM_TYPE }), 400, 'invalid_request')
    })

    const unsupported = ['password', 'refresh_token', 'urn:ietf:params:oauth:grant-type:jwt-bearer', 'CLIENT_CREDENTIALS', 'x"y\\z', 'caf\u00e9', 'g'.repeat(5000)]
    for (const grantType of unsupported) {
      it(`refuses grant_type=${grantType.slice(0, 40)} with unsupported_grant_type`, async () => {
        expectOAuthError(await form(new URLSearchParams({ grant_type: grantType }).toString()), 400, 'unsupported_grant_type')
      })
    }

    it('refuses grant_type=authorization_code to a client that did not register it', async () => {
      expectOAuthError(await form(new URLSearchParams({ grant_type: 'authorization_code', code: 'x' }).toString()), 400, 'unauthorized_client')
    })

    const ignored = [
      'grant_type=client_credentials&foo=bar',
      'grant_type=client_credentials&foo=bar&x=',
      'grant_type=client_credentials&__proto__=x&constructor=y&toString=z',
      'grant_type=client_credentials&scope=',
      'grant_type=client_credentials&%zz=%zz',
    ]
    for (const body of ignored) {
      it(`ignores unknown or empty parameters: ${body}`, async () => {
        const answer = await form(body)
        expect(answer.status, describeAnswer(answer)).toBe(200)
      })
    }

    it('accepts a charset parameter on the form content-type', async () => {
      const answer = await form('grant_type=client_credentials', { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' })
      expect(answer.status, describeAnswer(answer)).toBe(200)
    })

    const badAuthorizations: Array<{ name: string; header: () => string }> = [
      { name: 'Basic with no credentials', header: () => 'Basic' },
      { name: 'Basic !!!', header: () => 'Basic !!!' },
      { name: 'Basic ====', header: () => 'Basic ====' },
      { name: 'Basic with two tokens', header: () => 'Basic abc def' },
      { name: 'Basic of text without a colon', header: () => `Basic ${base64('nocolon')}` },
      { name: 'Basic with an empty client id', header: () => `Basic ${base64(':secret')}` },
      { name: 'Basic with a malformed percent-encoding in the id', header: () => `Basic ${base64('%zz:secret')}` },
      { name: 'Basic with a malformed percent-encoding in the secret', header: () => `Basic ${base64(`${account.clientId}:%zz`)}` },
      { name: 'Basic with a NUL client id', header: () => `Basic ${base64('%00:secret')}` },
      { name: 'Basic with a raw NUL in the client id', header: () => `Basic ${base64('a\u0000b:secret')}` },
      { name: 'Basic with invalid UTF-8', header: () => `Basic ${Buffer.from([0xff, 0xfe, 0x3a, 0xff]).toString('base64')}` },
      { name: 'Basic with a 10,000-character client id', header: () => `Basic ${base64(`${'c'.repeat(10_000)}:secret`)}` },
      { name: 'Basic with an unknown client', header: () => basicAuth('client_nope', account.clientSecret) },
      { name: 'Basic with the wrong secret', header: () => basicAuth(account.clientId, 'wrong') },
      { name: 'Basic with an empty secret', header: () => basicAuth(account.clientId, '') },
      { name: 'Basic with Latin-1 bytes', header: () => 'Basic \u00e9\u00e9' },
      { name: 'Bearer', header: () => 'Bearer x' },
      { name: 'Digest', header: () => 'Digest username="x"' },
    ]
    for (const { name, header } of badAuthorizations) {
      it(`refuses ${name} with 401 invalid_client and a Basic challenge`, async () => {
        expectBasicChallenge(await form('grant_type=client_credentials', { authorization: header() }))
      })
    }

    it('refuses Basic together with client_secret in the body with 400 invalid_request', async () => {
      const body = new URLSearchParams({ grant_type: 'client_credentials', client_secret: account.clientSecret }).toString()
      expectOAuthError(await form(body), 400, 'invalid_request')
    })

    it('refuses Basic with a different client_id in the body with 400 invalid_request', async () => {
      expectOAuthError(await form('grant_type=client_credentials&client_id=someone_else'), 400, 'invalid_request')
    })

    it('refuses client_secret_post for a client registered for client_secret_basic with 401 invalid_client', async () => {
      const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.clientSecret }).toString()
      expectOAuthError(await tokens({ body, headers: FORM_TYPE }), 401, 'invalid_client')
    })

    const bodyCredentials: Array<{ name: string; params: () => Record<string, string> }> = [
      { name: 'no client authentication at all', params: () => ({}) },
      { name: 'a client_id alone', params: () => ({ client_id: account.clientId }) },
      { name: 'a client_secret alone', params: () => ({ client_secret: account.clientSecret }) },
      { name: 'a NUL client_id', params: () => ({ client_id: '\u0000', client_secret: 'x' }) },
      { name: 'a 10,000-character client_id', params: () => ({ client_id: 'c'.repeat(10_000), client_secret: 'x' }) },
    ]
    for (const { name, params } of bodyCredentials) {
      it(`refuses ${name} with 401 invalid_client`, async () => {
        const body = new URLSearchParams({ grant_type: 'client_credentials', ...params() }).toString()
        expectOAuthError(await tokens({ body, headers: FORM_TYPE }), 401, 'invalid_client')
      })
    }

    it('refuses a 100 KiB form body with a 4xx RFC 6749 error', async () => {
      const answer = await form(`grant_type=client_credentials&pad=${'p'.repeat(100 * 1024)}`)
      expect([400, 413], describeAnswer(answer)).toContain(answer.status)
      expectOAuthError(answer, answer.status, 'invalid_request')
    })

    it('refuses a 100 KiB JSON body with a 4xx RFC 6749 error', async () => {
      const answer = await tokens({ body: JSON.stringify({ grant_type: 'client_credentials', pad: 'p'.repeat(100 * 1024) }), headers: { ...JSON_TYPE, authorization: basic() } })
      expect([400, 413], describeAnswer(answer)).toContain(answer.status)
      expectOAuthError(answer, answer.status, 'invalid_request')
    })

    const badScopes = ['a"b', 'a\\b', '\u00e9', 'herald:keys:write\u0000', 'a\tb', 'orders:read', 'herald:nope']
    for (const scope of badScopes) {
      it(`refuses scope=${JSON.stringify(scope)} with invalid_scope`, async () => {
        expectOAuthError(await form(new URLSearchParams({ grant_type: 'client_credentials', scope }).toString()), 400, 'invalid_scope')
      })
    }

    const badResources: Array<{ name: string; resource: string | string[] }> = [
      { name: 'another audience', resource: 'https://api.other.example/' },
      { name: 'a relative reference', resource: '/accounts' },
      { name: 'not a URI', resource: 'not a uri' },
      { name: 'two resources', resource: ['https://a.example/', 'https://b.example/'] },
    ]
    for (const { name, resource } of badResources) {
      it(`refuses resource naming ${name} with invalid_target`, async () => {
        const params = new URLSearchParams({ grant_type: 'client_credentials' })
        for (const value of Array.isArray(resource) ? resource : [resource]) params.append('resource', value)
        expectOAuthError(await form(params.toString()), 400, 'invalid_target')
      })
    }

    it('answers an unknown account with 404 not_found', async () => {
      const answer = await send(`${h.current.origin}/accounts/acct_nope/oauth/tokens`, 'POST', { body: 'grant_type=client_credentials', headers: { ...FORM_TYPE, authorization: basic() } })
      expect(answer.status, describeAnswer(answer)).toBe(404)
    })

    it('answers an account id with a NUL byte with 404, not a 500', async () => {
      const answer = await send(`${h.current.origin}/accounts/%00/oauth/tokens`, 'POST', { body: 'grant_type=client_credentials', headers: { ...FORM_TYPE, authorization: basic() } })
      expect(answer.status, describeAnswer(answer)).toBe(404)
    })
  })

  describe(`management API with garbage (${dialect})`, () => {
    const keys = (authorization?: string) =>
      send(`${account.base}/keys`, 'GET', { headers: authorization === undefined ? {} : { authorization } })

    it('lists keys with a good token (the control)', async () => {
      const answer = await keys(`Bearer ${token}`)
      expect(answer.status, describeAnswer(answer)).toBe(200)
    })

    const badAuthorizations: Array<{ name: string; header: () => string | undefined }> = [
      { name: 'no Authorization header', header: () => undefined },
      { name: 'an empty Bearer', header: () => 'Bearer' },
      { name: 'Bearer followed by a space only', header: () => 'Bearer  ' },
      { name: 'Bearer a b', header: () => 'Bearer a b' },
      { name: 'Basic xxx', header: () => 'Basic xxx' },
      { name: 'a lowercase scheme with garbage', header: () => 'bearer !!!' },
      { name: 'a non-JWT token', header: () => 'Bearer not-a-jwt' },
      { name: 'a JWT of empty objects', header: () => `Bearer e30.e30.e30` },
      { name: 'an unsigned JWT (alg none)', header: () => `Bearer ${Buffer.from('{"alg":"none","typ":"at+jwt"}').toString('base64url')}.${Buffer.from(`{"iss":"${account.issuer}","aud":"${account.issuer}","client_id":"${account.clientId}","scope":"herald:keys:write","jti":"x","iat":1,"exp":9999999999}`).toString('base64url')}.` },
      { name: 'a token with a tampered signature', header: () => `Bearer ${token.slice(0, -6)}AAAAAA` },
      { name: 'a token with a NUL kid', header: () => `Bearer ${Buffer.from('{"alg":"ES256","kid":"\\u0000","typ":"at+jwt"}').toString('base64url')}.e30.AAAA` },
      { name: 'the operator token', header: () => `Bearer ${OPERATOR_TOKEN}` },
      { name: 'a 10 KB token', header: () => `Bearer ${'a'.repeat(10_000)}` },
    ]
    for (const { name, header } of badAuthorizations) {
      it(`refuses ${name} with 401 invalid_token`, async () => {
        const answer = await keys(header())
        expectProblem(answer, 401, 'invalid_token')
        expect(answer.headers.get('www-authenticate'), describeAnswer(answer)).toMatch(/^Bearer error="invalid_token"/)
      })
    }

    it('refuses a 20 KB Authorization header with 431 headers_too_large, before any route', async () => {
      expectProblem(await keys(`Bearer ${'a'.repeat(20 * 1024)}`), 431, 'headers_too_large')
    })

    // Below any HTTP client: bytes that are not HTTP/1.1, refused by Node's parser before Fastify sees a request.
    const notHttp = [
      { name: 'a method with a brace in it', request: () => `GE{T ${new URL(account.base).pathname}/keys HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n` },
      { name: 'a header line without a colon', request: () => `GET ${new URL(account.base).pathname}/keys HTTP/1.1\r\nHost: 127.0.0.1\r\nno colon here\r\n\r\n` },
      { name: 'a header name with a space, on the token endpoint', request: () => `POST ${new URL(account.base).pathname}/oauth/tokens HTTP/1.1\r\nHost: 127.0.0.1\r\nContent Type: x\r\n\r\n` },
    ]
    it('answers chunk extensions over the parser limit with 413 payload_too_large and closes the connection', async () => {
      // Authorized and typed, so that the route reads the body rather than answer before it.
      const headers = `Host: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n`
      const head = `POST ${new URL(account.base).pathname}/keys/rotate HTTP/1.1\r\n${headers}\r\n`
      expectClosingProblem(await exchange(h.current.origin, [`${head}1;${'x'.repeat(20 * 1024)}\r\n`]), 413, 'payload_too_large')
    })

    for (const { name, request } of notHttp) {
      it(`answers ${name} with 400 bad_request and closes the connection`, async () => {
        expectClosingProblem(await exchange(h.current.origin, [request()]), 400, 'bad_request')
      })
    }

    it('refuses a token without the route scope with 403 insufficient_scope', async () => {
      const narrow = await managementToken(account, 'herald:clients:read')
      expectProblem(await keys(`Bearer ${narrow}`), 403, 'insufficient_scope')
    })

    const revoke = (kid: string, options: SendOptions = {}) =>
      send(`${account.base}/keys/${kid}/revoke`, 'POST', { token, ...options })

    const badKids: Array<{ name: string; kid: string; status: number | 'any4xx'; code?: ProblemCode }> = [
      { name: 'an unknown kid', kid: 'kid_nope', status: 404, code: 'not_found' },
      { name: 'a NUL kid', kid: '%00', status: 404, code: 'not_found' },
      { name: 'an encoded ../', kid: '..%2F..%2F', status: 404 },
      { name: 'a 65-character kid', kid: 'k'.repeat(65), status: 400, code: 'validation_failed' },
      { name: 'a 10,000-character kid', kid: 'k'.repeat(10_000), status: 'any4xx' },
      { name: 'a malformed percent-encoding', kid: '%zz', status: 400 },
    ]
    for (const { name, kid, status, code } of badKids) {
      it(`answers a revoke of ${name} with a ${status === 'any4xx' ? '4xx' : status} problem`, async () => {
        expectProblem(await revoke(kid), status, code)
      })
    }

    it('refuses an invalid JSON body on revoke and rotate with 400 invalid_json', async () => {
      const list = await keys(`Bearer ${token}`)
      const kid = (list.body.data as Array<{ kid: string }>)[0]!.kid
      expectProblem(await revoke(kid, { body: '{bad', headers: JSON_TYPE }), 400, 'invalid_json')
      expectProblem(await send(`${account.base}/keys/rotate`, 'POST', { token, body: '{bad', headers: JSON_TYPE }), 400, 'invalid_json')
    })

    it('refuses a 100 KiB body on rotate with 413', async () => {
      const answer = await send(`${account.base}/keys/rotate`, 'POST', { token, body: JSON.stringify({ pad: 'p'.repeat(100 * 1024) }), headers: JSON_TYPE })
      expectProblem(answer, 413, 'payload_too_large')
    })
  })

  describe(`unknown routes and unknown accounts (${dialect})`, () => {
    const routes: Array<{ name: string; method: string; path: () => string; headers?: Record<string, string>; code: ProblemCode | readonly ProblemCode[] }> = [
      { name: 'GET /nope', method: 'GET', path: () => '/nope', code: 'route_not_found' },
      { name: 'DELETE /accounts', method: 'DELETE', path: () => '/accounts', headers: operator, code: 'route_not_found' },
      { name: 'PUT /accounts', method: 'PUT', path: () => '/accounts', headers: operator, code: 'route_not_found' },
      { name: 'PUT /openapi.json', method: 'PUT', path: () => '/openapi.json', code: 'route_not_found' },
      { name: 'GET /accounts/{id}/nope', method: 'GET', path: () => `/accounts/${account.id}/nope`, code: 'route_not_found' },
      { name: 'GET /accounts/{id}/keys/ (trailing slash)', method: 'GET', path: () => `/accounts/${account.id}/keys/`, code: 'route_not_found' },
      { name: 'DELETE /accounts/{id}/keys', method: 'DELETE', path: () => `/accounts/${account.id}/keys`, code: 'route_not_found' },
      { name: 'GET /accounts/{id}/oauth/tokens', method: 'GET', path: () => `/accounts/${account.id}/oauth/tokens`, code: 'route_not_found' },
      { name: 'GET /accounts/acct_nope/nope', method: 'GET', path: () => '/accounts/acct_nope/nope', code: ['route_not_found', 'not_found'] },
      { name: 'GET /accounts/acct_nope/.well-known/jwks.json', method: 'GET', path: () => '/accounts/acct_nope/.well-known/jwks.json', code: 'not_found' },
      { name: 'GET /accounts/acct_nope/keys', method: 'GET', path: () => '/accounts/acct_nope/keys', code: 'not_found' },
      { name: 'GET /accounts/acct_nope/.well-known/openid-configuration', method: 'GET', path: () => '/accounts/acct_nope/.well-known/openid-configuration', code: 'not_found' },
      { name: 'GET /.well-known/oauth-authorization-server/accounts/acct_nope', method: 'GET', path: () => '/.well-known/oauth-authorization-server/accounts/acct_nope', code: 'not_found' },
      { name: 'GET /accounts/%00/.well-known/jwks.json', method: 'GET', path: () => '/accounts/%00/.well-known/jwks.json', code: 'not_found' },
      { name: 'GET /.well-known/oauth-authorization-server/accounts/%00', method: 'GET', path: () => '/.well-known/oauth-authorization-server/accounts/%00', code: 'not_found' },
      { name: 'GET /accounts/{10,000 chars}/.well-known/jwks.json', method: 'GET', path: () => `/accounts/${'a'.repeat(10_000)}/.well-known/jwks.json`, code: ['not_found', 'validation_failed', 'bad_request'] },
    ]
    for (const { name, method, path, headers, code } of routes) {
      it(`answers ${name} with a 404 problem`, async () => {
        const answer = await send(`${h.current.origin}${path()}`, method, { headers })
        if (name.includes('10,000')) expectProblem(answer, 'any4xx', code)
        else expectProblem(answer, 404, code)
      })
    }

    it('answers a malformed percent-encoding in the path with a 400 problem', async () => {
      expectProblem(await send(`${h.current.origin}/%zz`, 'GET'), 400, 'bad_request')
      expectProblem(await send(`${h.current.origin}/accounts/%zz/.well-known/jwks.json`, 'GET'), 400, 'bad_request')
    })
  })

  describe(`afterwards (${dialect})`, () => {
    it('wrote nothing: every table has the rows it had before the garbage', async () => {
      expect(await countRows(h.current)).toEqual(before)
    })

    it('logged no unhandled error and answered no 5xx', () => {
      interface LogEntry {
        level?: number
        msg?: string
        reqId?: string
        res?: { statusCode?: number }
        err?: { type?: string; message?: string; stack?: string }
      }
      const offending = h.current.logs
        .flatMap((chunk) => chunk.split('\n'))
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as LogEntry)
        .filter((entry) => (entry.level ?? 0) >= 50 || entry.msg === 'unhandled error' || (entry.res?.statusCode ?? 0) >= 500)
        .map((entry) => {
          if (entry.res?.statusCode !== undefined) return `${entry.reqId}: answered ${entry.res.statusCode}`
          const frame = entry.err?.stack?.split('\n').find((line) => line.includes('/src/'))?.trim() ?? ''
          return `${entry.reqId}: ${entry.msg} ${entry.err?.type}: ${entry.err?.message} ${frame}`
        })
      expect(offending).toEqual([])
    })
  })
})
