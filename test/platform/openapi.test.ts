import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { Validator } from '@seriousme/openapi-schema-validator'
import openapiTS, { astToString } from 'openapi-typescript'
import { describe, expect, it } from 'vitest'
import { forEachDialect, startHerald, useHerald } from '../support/herald.js'
import { basicAuth, call, createAccount } from '../support/http.js'

interface MediaType {
  schema: Record<string, unknown>
}

interface Operation {
  tags?: string[]
  security?: Array<Record<string, string[]>>
  requestBody?: { content: Record<string, unknown> }
  responses: Record<string, { description: string; content?: Record<string, MediaType> }>
}

interface OpenApiDocument {
  [field: string]: unknown
  openapi: string
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> }
}

const OAUTH_ENDPOINTS = ['/accounts/{accountId}/oauth/tokens', '/accounts/{accountId}/oauth/introspect', '/accounts/{accountId}/oauth/revoke', '/accounts/{accountId}/oauth/par', '/accounts/{accountId}/oauth/device_authorization']
/** Answers RFC 6750 errors to a user's access token. */
const USERINFO = '/accounts/{accountId}/oauth/userinfo'
/** Browsers' endpoints: their errors are shown, as plain text, not parsed. */
const AUTHORIZE = '/accounts/{accountId}/oauth/authorize'
const LOGOUT = '/accounts/{accountId}/oauth/logout'
const BROWSER_PATHS = [AUTHORIZE, LOGOUT, '/accounts/{accountId}/oauth/device']
/** Dynamic client registration (RFC 7591, RFC 7592): JSON in and out, errors as RFC 7591 §3.2.2's JSON objects. */
const REGISTER = '/accounts/{accountId}/oauth/register'
const REGISTRATION_PATHS = [REGISTER, '/accounts/{accountId}/oauth/register/{clientId}']
const OPERATOR_PATHS = ['/accounts', '/accounts/{accountId}', '/accounts/{accountId}/console-links']
const PUBLIC_PATHS = [
  '/healthz',
  '/readyz',
  '/accounts/{accountId}/.well-known/jwks.json',
  '/accounts/{accountId}/.well-known/openid-configuration',
  '/accounts/{accountId}/.well-known/oauth-authorization-server',
  '/.well-known/oauth-authorization-server/accounts/{accountId}',
  '/accounts/{accountId}/console-links/exchange',
  ...BROWSER_PATHS,
]

/** The operations of the document, as `METHOD /path`. */
function operationsOf(document: OpenApiDocument): Array<{ name: string; path: string; operation: Operation }> {
  return Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, path, operation })))
}

/**
 * The routes Fastify registered, as `METHOD /path` with OpenAPI's `{param}`, read from `printRoutes`: one line per
 * node of the radix tree, indented four characters a level, with its segment and the methods routed there.
 */
function registeredRoutes(tree: string): string[] {
  const segments: string[] = []
  const routes: string[] = []
  for (const line of tree.split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?$/.exec(line)
    if (!match?.[2]) continue
    const depth = (match[1]?.length ?? 0) / 4
    segments.length = depth
    segments.push(match[2])
    const url = segments.join('').replace(/:(\w+)/g, '{$1}')
    for (const method of match[3]?.split(', ') ?? []) routes.push(`${method} ${url}`)
  }
  return routes
}

/** The media types the document gives for an answer of `status` to an operation. */
function documentedMediaTypes(operation: Operation, status: number): string[] {
  const response = operation.responses[String(status)] ?? operation.responses[`${String(status)[0]}XX`]
  return Object.keys(response?.content ?? {})
}

forEachDialect((dialect) => {
  const h = useHerald(dialect)
  const fetchDocument = async (origin = h.current.origin) => {
    const response = await call<OpenApiDocument>(`${origin}/openapi.json`, 'GET')
    expect(response.status).toBe(200)
    return response.body
  }

  describe('GET /openapi.json', () => {
    it('describes the whole API as OpenAPI 3.1, generated from the route schemas', async () => {
      const { openapi, paths } = await fetchDocument()
      expect(openapi).toBe('3.1.0')
      for (const path of [
        '/accounts',
        '/accounts/{accountId}',
        '/accounts/{accountId}/oauth/tokens',
        '/accounts/{accountId}/oauth/clients',
        '/accounts/{accountId}/oauth/scopes',
        '/accounts/{accountId}/settings',
        '/accounts/{accountId}/keys/rotate',
        '/accounts/{accountId}/.well-known/jwks.json',
        '/.well-known/oauth-authorization-server/accounts/{accountId}',
        '/healthz',
        '/readyz',
      ]) {
        expect(paths, path).toHaveProperty([path])
      }
      expect(paths['/accounts/{accountId}/keys/rotate']?.post?.security).toEqual([{ managementToken: ['herald:keys:write'] }])
      // Client authentication, never a management token: HTTP Basic, or the credentials in the form body.
      expect(paths['/accounts/{accountId}/oauth/tokens']?.post?.security).toEqual([{ clientSecretBasic: [] }, {}])
      expect(Object.keys(paths['/accounts/{accountId}/oauth/tokens']?.post?.requestBody?.content ?? {})).toEqual(['application/x-www-form-urlencoded'])
    })

    it('is a valid OpenAPI 3.1 document', async () => {
      const validator = new Validator()
      const result = await validator.validate(await fetchDocument())
      expect(result.errors).toBeUndefined()
      expect(result.valid).toBe(true)
      expect(validator.version).toBe('3.1')
    })

    it("documents every route Fastify registered, with its method; only HEAD, CORS preflights, the console's and the reference's files and its own plumbing are left out", async () => {
      const documented = new Set(operationsOf(await fetchDocument()).map(({ name }) => name))
      // The console (src/platform/http/console.ts) and the reference at /docs (api-reference.ts) are clients of the
      // API, not part of it: their pages and assets.
      const registered = registeredRoutes(h.current.app.printRoutes({ commonPrefix: false })).filter((route) => !route.startsWith('GET /console') && !route.startsWith('GET /docs'))
      expect(registered.length).toBeGreaterThan(documented.size)
      expect(registered.filter((route) => !route.startsWith('HEAD ') && !documented.has(route)).sort()).toEqual([
        'GET /',
        'GET /metrics',
        'GET /openapi.json',
        'OPTIONS /accounts/{accountId}/.well-known/jwks.json',
        'OPTIONS /accounts/{accountId}/oauth/revoke',
        'OPTIONS /accounts/{accountId}/oauth/tokens',
        'OPTIONS /accounts/{accountId}/oauth/userinfo',
      ])
      expect([...documented].filter((operation) => !registered.includes(operation))).toEqual([])
    })

    it('names the shared shapes as components and references them', async () => {
      const document = await fetchDocument()
      const names = ['Problem', 'OAuthError', 'Account', 'Client', 'Scope', 'Key', 'Settings', 'Endpoint', 'Subscription', 'Delivery', 'Attempt', 'Event']
      expect(Object.keys(document.components.schemas)).toEqual(expect.arrayContaining(names))
      expect(Object.keys(document.components.schemas).filter((name) => name.startsWith('def-'))).toEqual([])
      const schemaOf = (path: string, method: string, status: string) => document.paths[path]?.[method]?.responses[status]?.content?.['application/json']?.schema
      const base = '/accounts/{accountId}'
      expect(schemaOf('/accounts/{accountId}', 'get', '200')).toEqual({ $ref: '#/components/schemas/Account' })
      expect(schemaOf(`${base}/oauth/clients/{clientId}`, 'get', '200')).toEqual({ $ref: '#/components/schemas/Client' })
      expect(schemaOf(`${base}/oauth/scopes/{name}`, 'get', '200')).toEqual({ $ref: '#/components/schemas/Scope' })
      expect(schemaOf(`${base}/keys/{kid}/revoke`, 'post', '200')).toEqual({ $ref: '#/components/schemas/Key' })
      expect(schemaOf(`${base}/settings`, 'get', '200')).toEqual({ $ref: '#/components/schemas/Settings' })
      expect(schemaOf(`${base}/webhooks/endpoints/{endpointId}`, 'get', '200')).toEqual({ $ref: '#/components/schemas/Endpoint' })
      expect(schemaOf(`${base}/webhooks/subscriptions/{subscriptionId}`, 'get', '200')).toEqual({ $ref: '#/components/schemas/Subscription' })
      expect(schemaOf(`${base}/webhooks/events/{eventId}`, 'get', '200')).toEqual({ $ref: '#/components/schemas/Event' })
      expect(schemaOf(`${base}/webhooks/deliveries/{deliveryId}/retry`, 'post', '202')).toEqual({ $ref: '#/components/schemas/Delivery' })
      expect(schemaOf(`${base}/webhooks/deliveries`, 'get', '200')).toMatchObject({ properties: { data: { items: { $ref: '#/components/schemas/Delivery' } } } })
      expect(document.components.schemas.DeliveryWithAttempts).toMatchObject({ properties: { attempts: { items: { $ref: '#/components/schemas/Attempt' } } } })
    })

    it('describes every response; errors are problem+json (RFC 9457), except OAuth errors, which are JSON (RFC 6749 §5.2)', async () => {
      for (const { name, path, operation } of operationsOf(await fetchDocument())) {
        for (const [status, response] of Object.entries(operation.responses)) {
          expect(response.description, `${name} ${status}`).not.toMatch(/^(Default Response)?$/)
          if (!/^[45]/.test(status)) continue
          if (BROWSER_PATHS.includes(path) && status === '400') {
            expect(response.content, `${name} ${status}`).toEqual({ 'text/plain': { schema: { type: 'string' } } })
            continue
          }
          const oauthError = (OAUTH_ENDPOINTS.includes(path) || path === USERINFO || REGISTRATION_PATHS.includes(path)) && status !== '404'
          const [mediaType, schema] = oauthError ? ['application/json', 'OAuthError'] : ['application/problem+json', 'Problem']
          expect(response.content, `${name} ${status}`).toEqual({ [mediaType]: { schema: { $ref: `#/components/schemas/${schema}` } } })
        }
      }
    })

    it('matches the content types the server actually answers with', async () => {
      const { paths } = await fetchDocument()
      const account = await createAccount(h.current, 'openapi')
      const tokens = paths['/accounts/{accountId}/oauth/tokens']?.post
      const clients = paths['/accounts/{accountId}/oauth/clients']?.get
      const operator = paths['/accounts']?.get
      if (!tokens || !clients || !operator) throw new Error('the document lacks an operation under test')
      const answers = [
        { operation: tokens, response: await call(`${account.base}/oauth/tokens`, 'POST', { form: { grant_type: 'client_credentials', client_id: account.clientId, client_secret: 'wrong' } }) },
        { operation: tokens, response: await call(`${account.base}/oauth/tokens`, 'POST', { form: { grant_type: 'password' }, headers: { authorization: basicAuth(account.clientId, account.clientSecret) } }) },
        { operation: tokens, response: await call(`${h.current.origin}/accounts/acct_nope/oauth/tokens`, 'POST', { form: { grant_type: 'client_credentials' } }) },
        { operation: clients, response: await call(`${account.base}/oauth/clients`, 'GET') },
        { operation: clients, response: await call(`${account.base}/oauth/clients?limit=0`, 'GET', { token: 'not-a-token' }) },
        { operation: operator, response: await call(`${h.current.origin}/accounts`, 'GET', { token: 'wrong' }) },
      ]
      expect(answers.map(({ response }) => response.status)).toEqual([401, 400, 404, 401, 400, 401])
      for (const { operation, response } of answers) {
        const mediaType = (response.headers.get('content-type') ?? '').split(';')[0] ?? ''
        expect(documentedMediaTypes(operation, response.status), response.text).toContain(mediaType)
      }
    })

    it('names the security requirement of every operation', async () => {
      const { paths, components } = await fetchDocument()
      expect(Object.keys(components.securitySchemes).sort()).toEqual(['clientSecretBasic', 'initialAccessToken', 'managementToken', 'operatorToken', 'registrationAccessToken', 'userAccessToken'])
      for (const { name, path, operation } of operationsOf({ paths } as OpenApiDocument)) {
        if (OAUTH_ENDPOINTS.includes(path)) expect(operation.security, name).toEqual([{ clientSecretBasic: [] }, {}])
        else if (OPERATOR_PATHS.includes(path)) expect(operation.security, name).toEqual([{ operatorToken: [] }])
        else if (PUBLIC_PATHS.includes(path)) expect(operation.security, name).toEqual([])
        else if (path === USERINFO) expect(operation.security, name).toEqual([{ userAccessToken: [] }])
        else if (path === REGISTER) expect(operation.security, name).toEqual([{ initialAccessToken: [] }, {}])
        else if (REGISTRATION_PATHS.includes(path)) expect(operation.security, name).toEqual([{ registrationAccessToken: [] }])
        else expect(operation.security, name).toEqual([{ managementToken: [expect.stringMatching(/^herald:[a-z]+(:[a-z]+)?$/)] }])
      }
    })

    it('documents the operator routes even when the operator API is disabled', async () => {
      const bare = await startHerald(dialect, { env: { HERALD_OPERATOR_TOKEN: '' }, worker: false })
      try {
        const { paths } = await fetchDocument(bare.origin)
        expect(paths['/accounts']).toEqual((await fetchDocument()).paths['/accounts'])
        expect(Object.keys(paths['/accounts/{accountId}'] ?? {}).sort()).toEqual(['get', 'patch'])
      } finally {
        await bare.close()
      }
    })

    it('generates TypeScript types with openapi-typescript that compile', async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'herald-openapi-'))
      try {
        await writeFile(path.join(dir, 'herald.ts'), astToString(await openapiTS(JSON.stringify(await fetchDocument()))))
        // A client's use of the generated types: the named components and an operation's answers.
        await writeFile(
          path.join(dir, 'client.ts'),
          [
            "import type { components, paths } from './herald.js'",
            "type Problem = components['schemas']['Problem']",
            "export const code: Problem['code'] = 'not_found'",
            "export type Created = paths['/accounts/{accountId}/oauth/clients']['post']['responses'][201]['content']['application/json']",
            "export const secret: Created['client_secret'] = 'shown once'",
            "export type Refused = paths['/accounts/{accountId}/oauth/clients']['post']['responses']['4XX']['content']['application/problem+json']",
            "export const refused: Refused = { type: 'urn:herald:problem:conflict', title: 'Conflict', status: 409, code: 'conflict' }",
            "export type Token = paths['/accounts/{accountId}/oauth/tokens']['post']['responses'][200]['content']['application/json']",
            "export const expiresIn: Token['expires_in'] = 300",
          ].join('\n'),
        )
        const compilerOptions = { strict: true, noEmit: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', types: [], skipLibCheck: false }
        await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['herald.ts', 'client.ts'] }))
        const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
        await expect(promisify(execFile)(process.execPath, [tsc, '-p', dir])).resolves.toMatchObject({ stdout: '' })
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    })
  })
})
