import { describe, expect, it } from 'vitest'
import { API_TAGS } from '../../src/platform/http/operations.js'
import { withChromium } from '../support/chromium.js'
import { forEachDialect, startHerald, useHerald } from '../support/herald.js'
import { call } from '../support/http.js'

// What a reader of the API meets: operations named for client generators and filed under declared tags, and the
// reference at /docs that renders the document in a browser from Herald's own files, under a strict CSP.

interface OpenApiDocument {
  tags: Array<{ name: string; description?: string }>
  paths: Record<string, Record<string, { operationId?: string; tags?: string[]; summary?: string }>>
}

/** Names clients are generated with, so renaming one breaks them: these must stay as they are. */
const PINNED: Record<string, string> = {
  'POST /accounts': 'createAccount',
  'POST /accounts/{accountId}/oauth/clients': 'createClient',
  'POST /accounts/{accountId}/oauth/tokens': 'issueToken',
  'POST /accounts/{accountId}/webhooks/endpoints': 'createEndpoint',
  'POST /accounts/{accountId}/webhooks/events': 'publishEvent',
  'GET /accounts/{accountId}/webhooks/deliveries': 'listDeliveries',
  'GET /accounts/{accountId}/webhooks/deliveries/{deliveryId}': 'getDelivery',
  'POST /accounts/{accountId}/webhooks/deliveries/{deliveryId}/retry': 'retryDelivery',
}

/** Each operation of the document as `METHOD /path`, with its operation object. */
function operationsOf(document: OpenApiDocument): Array<[string, { operationId?: string; tags?: string[] }]> {
  return Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => [`${method.toUpperCase()} ${path}`, operation] as [string, typeof operation]))
}

/** The URLs a page's `src` and `href` attributes name, but `data:` ones. */
function linkedUrls(html: string): string[] {
  return [...html.matchAll(/\s(?:src|href)="([^"]+)"/g)].map((match) => match[1] ?? '').filter((url) => !url.startsWith('data:'))
}

forEachDialect((dialect) => {
  const h = useHerald(dialect)
  const fetchDocument = async () => {
    const response = await call<OpenApiDocument>(`${h.current.origin}/openapi.json`, 'GET')
    expect(response.status).toBe(200)
    return response.body
  }

  describe('operation names and tags in /openapi.json', () => {
    it('gives every operation a unique operationId, verbNoun in camelCase, and one declared tag', async () => {
      const document = await fetchDocument()
      const declared = document.tags.map(({ name }) => name)
      const operations = operationsOf(document)
      expect(operations.length).toBeGreaterThan(70)
      for (const [name, operation] of operations) {
        expect(operation.operationId, `${name} has no operationId: name it in src/platform/http/operations.ts`).toMatch(/^[a-z][A-Za-z]+$/)
        expect(operation.tags, name).toHaveLength(1)
        expect(declared, name).toContain(operation.tags?.[0])
      }
      const ids = operations.map(([, operation]) => operation.operationId)
      expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([])
    })

    it('declares each tag once, with a description, and files an operation under every one', async () => {
      const document = await fetchDocument()
      const names = document.tags.map(({ name }) => name)
      expect(new Set(names).size).toBe(names.length)
      for (const tag of document.tags) expect(tag.description, tag.name).toMatch(/\w{3}/)
      const used = new Set(operationsOf(document).flatMap(([, operation]) => operation.tags ?? []))
      expect(names.filter((name) => !used.has(name))).toEqual([])
    })

    it('keeps the names clients are generated with', async () => {
      const operations = new Map(operationsOf(await fetchDocument()))
      for (const [name, operationId] of Object.entries(PINNED)) expect(operations.get(name)?.operationId, name).toBe(operationId)
    })

    it('names, in the table, only operations the server has: no row is left behind by a moved route', async () => {
      const documented = Object.fromEntries(operationsOf(await fetchDocument()).map(([name, operation]) => [name, operation.operationId]))
      const rows = API_TAGS.flatMap((tag) => Object.entries(tag.operations).map(([operationId, name]) => [name, operationId]))
      expect(documented).toEqual(Object.fromEntries(rows))
      // Two rows for one route would leave one of them unused.
      expect(rows).toHaveLength(Object.keys(documented).length)
    })
  })

  describe('GET /docs', () => {
    it('answers the reference page with a strict policy of its own: no inline code, no eval, nothing from elsewhere', async () => {
      const response = await call(`${h.current.origin}/docs`, 'GET')
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
      const csp = response.headers.get('content-security-policy') ?? ''
      expect(csp.split('; ')).toEqual(expect.arrayContaining(["default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'", "frame-ancestors 'none'"]))
      expect(csp).not.toMatch(/unsafe|https?:|\*/)
      expect(response.headers.get('x-frame-options')).toBe('DENY')
      expect(response.headers.get('x-content-type-options')).toBe('nosniff')
      expect(response.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/)
      expect(response.text).not.toMatch(/<style|\sstyle=/)
    })

    it("serves every file the page names itself, Swagger UI's from swagger-ui-dist", async () => {
      const page = await call(`${h.current.origin}/docs`, 'GET')
      const urls = linkedUrls(page.text)
      expect(urls).toEqual(['/docs/assets/swagger-ui.css', '/docs/assets/swagger-ui-bundle.js', '/docs/reference.js'])
      for (const url of urls) {
        const file = await call(`${h.current.origin}${url}`, 'GET')
        expect(file.status, url).toBe(200)
        expect(file.headers.get('content-type'), url).toMatch(url.endsWith('.css') ? /^text\/css/ : /^(text|application)\/javascript/)
        expect(file.headers.get('content-security-policy'), url).toBe(page.headers.get('content-security-policy'))
      }
      expect((await call(`${h.current.origin}/docs/reference.js`, 'GET')).text).toContain('validatorUrl: null')
    })

    it("serves none of swagger-ui-dist's other files: its demo page and petstore initializer stay out", async () => {
      for (const path of ['/docs/assets/index.html', '/docs/assets/swagger-initializer.js', '/docs/assets/package.json', '/docs/assets/../package.json', '/docs/assets/']) {
        const response = await call(`${h.current.origin}${path}`, 'GET')
        expect(response.status, path).toBe(404)
      }
    })
  })

  describe('GET /', () => {
    it('sends the browser to the console', async () => {
      const response = await call(`${h.current.origin}/`, 'GET', { redirect: 'manual' })
      expect(response.status).toBe(302)
      expect(response.headers.get('location')).toBe('/console/')
    })

    it("keeps the reference's URLs and the redirect under a PUBLIC_URL with a path, behind a proxy that strips it", async () => {
      const prefixed = await startHerald(dialect, { env: { PUBLIC_URL: 'https://example.test/herald' }, worker: false })
      try {
        expect(linkedUrls((await call(`${prefixed.origin}/docs`, 'GET')).text)).toEqual(['/herald/docs/assets/swagger-ui.css', '/herald/docs/assets/swagger-ui-bundle.js', '/herald/docs/reference.js'])
        expect((await call(`${prefixed.origin}/docs`, 'GET')).text).toContain('data-openapi-url="/herald/openapi.json"')
        expect((await call(`${prefixed.origin}/`, 'GET', { redirect: 'manual' })).headers.get('location')).toBe('/herald/console/')
      } finally {
        await prefixed.close()
      }
    })
  })

  withChromium('renders /docs in Chromium', (browser) => {
    it('renders the reference in Chromium from Herald alone: every request to 127.0.0.1, no page error, no console error', async () => {
      const context = await browser.current.newContext()
      try {
        const page = await context.newPage()
        const requested: string[] = []
        const problems: string[] = []
        page.on('request', (request) => requested.push(request.url()))
        page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
        // A CSP violation is reported as a console error, so this also proves the page runs under its policy.
        page.on('console', (message) => {
          if (message.type() === 'error') problems.push(`console: ${message.text()}`)
        })
        await page.goto(`${h.current.origin}/docs`)
        const createEndpoint = page.locator('#operations-Endpoints-createEndpoint')
        await createEndpoint.getByText('Adds an endpoint').waitFor({ timeout: 20_000 })
        await expect(createEndpoint.getByText('createEndpoint', { exact: true }).count()).resolves.toBe(1)
        // Opened, the operation renders its request body and responses too.
        await createEndpoint.getByText('Adds an endpoint').click()
        await createEndpoint.getByText('Request body').waitFor()
        // Each tag is a section, with its description from the document.
        await page.locator('#operations-tag-Deliveries').getByText('One event on its way to one endpoint').waitFor()

        expect(requested).toContain(`${h.current.origin}/openapi.json`)
        expect(requested.filter((url) => new URL(url).hostname !== '127.0.0.1')).toEqual([])
        expect(problems).toEqual([])
      } finally {
        await context.close()
      }
    }, 60_000)
  })
})
