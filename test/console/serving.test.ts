import { readdir } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { CONSOLE_ROOT } from '../../src/platform/http/console.js'
import { forEachDialect, startHerald, useHerald } from '../support/herald.js'
import { call } from '../support/http.js'

// The console's pages and assets as a browser first meets them: its security headers, and caching that is safe
// across a new build (index.html revalidated every time, hashed assets kept for good).

forEachDialect((dialect) => {
  const h = useHerald(dialect)

  describe('GET /console/', () => {
    it('answers index.html, never cached, with a strict CSP and the framing, sniffing and referrer headers', async () => {
      const response = await call(`${h.current.origin}/console/`, 'GET')
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
      expect(response.headers.get('cache-control')).toBe('no-cache')
      const csp = response.headers.get('content-security-policy') ?? ''
      expect(csp.split('; ')).toEqual(expect.arrayContaining(["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"]))
      expect(csp).not.toContain('unsafe-inline')
      expect(response.headers.get('x-frame-options')).toBe('DENY')
      expect(response.headers.get('x-content-type-options')).toBe('nosniff')
      expect(response.headers.get('referrer-policy')).toBe('no-referrer')
      // Nothing inline for the CSP to refuse: scripts and styles come from files.
      expect(response.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/)
      expect(response.text).not.toMatch(/<style|\sstyle=/)
      expect(response.text).toContain(`<base href="/console/" />`)
    })

    it('answers index.html for deep links under /console/, so a bookmark opens its page', async () => {
      const response = await call(`${h.current.origin}/console/deliveries/dlv_x?status=failed`, 'GET')
      expect(response.status).toBe(200)
      expect(response.text).toContain('<div id="app"></div>')
      expect(response.headers.get('cache-control')).toBe('no-cache')
    })

    it('sends /console to /console/', async () => {
      const response = await call(`${h.current.origin}/console`, 'GET', { redirect: 'manual' })
      expect(response.status).toBe(301)
      expect(response.headers.get('location')).toBe('/console/')
    })

    it('caches hashed assets immutably for a year, and answers 404 for an asset that does not exist', async () => {
      const assets = await readdir(`${CONSOLE_ROOT}assets`)
      const script = assets.find((name) => name.endsWith('.js'))
      expect(script).toBeDefined()
      const response = await call(`${h.current.origin}/console/assets/${script}`, 'GET')
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toMatch(/^(text|application)\/javascript/)
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
      expect(response.headers.get('x-content-type-options')).toBe('nosniff')
      const missing = await call(`${h.current.origin}/console/assets/index-nothere.js`, 'GET')
      expect(missing.status).toBe(404)
    })

    it('gives index.html the base of a PUBLIC_URL with a path, behind a proxy that strips it', async () => {
      const prefixed = await startHerald(dialect, { env: { PUBLIC_URL: 'https://example.test/herald' } })
      try {
        const page = await call(`${prefixed.origin}/console/endpoints`, 'GET')
        expect(page.text).toContain(`<base href="/herald/console/" />`)
        const bare = await call(`${prefixed.origin}/console`, 'GET', { redirect: 'manual' })
        expect(bare.headers.get('location')).toBe('/herald/console/')
      } finally {
        await prefixed.close()
      }
    })

    it('keeps the console out of the OpenAPI document', async () => {
      const document = await call<{ paths: Record<string, unknown> }>(`${h.current.origin}/openapi.json`, 'GET')
      expect(Object.keys(document.body.paths).filter((path) => path.startsWith('/console'))).toEqual([])
    })
  })
})
