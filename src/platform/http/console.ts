import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import fastifyStatic from '@fastify/static'
import { sendProblem } from './error-handler.js'
import { ProblemError } from './problems.js'
import type { App } from './types.js'

/**
 * Where `npm run build` puts the console (Vite, from console/): dist/console/. This module sits three folders below
 * the package root both as src/platform/http/console.ts and as dist/platform/http/console.js.
 */
export const CONSOLE_ROOT = fileURLToPath(new URL('../../../dist/console/', import.meta.url))

/**
 * The console is a client of the public API only, so its pages need nothing but their own scripts and styles and
 * same-origin requests: no inline code, no framing, no referrer leaking ids in URLs.
 */
export const CONSOLE_HEADERS = {
  'content-security-policy': [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
}

/** Vite hashes every file under assets/, so a name never changes content. */
const IMMUTABLE = 'public, max-age=31536000, immutable'

/**
 * Serves the console at `{PUBLIC_URL}/console/`: hashed assets cached for good, and index.html, never cached, for
 * the console's own paths (deep links and bookmarks included), so a new build is picked up on the next load. A
 * browser opening PUBLIC_URL itself is sent there too. The routes are hidden from the OpenAPI document: they are not
 * part of the API.
 */
export async function consoleRoutes(app: App, publicUrl: string, root = CONSOLE_ROOT): Promise<void> {
  const base = `${new URL(publicUrl).pathname.replace(/\/$/, '')}/console/`
  const index = await readIndex(root, base)
  await app.register(async (scope) => {
    scope.addHook('onSend', async (_request, reply) => {
      reply.headers(CONSOLE_HEADERS)
    })
    // 302, not 301: the root may come to answer something else, and browsers keep a 301 for good.
    scope.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect(base, 302))
    scope.get('/console', { schema: { hide: true } }, async (_request, reply) => reply.redirect(base, 301))
    scope.get('/console/*', { schema: { hide: true } }, async (_request, reply) => {
      if (index === undefined) return sendProblem(reply, new ProblemError('not_found', 'The console is not built: npm run build puts it in dist/console/'))
      return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(index)
    })
    if (index === undefined) return
    await scope.register(fastifyStatic, {
      root: join(root, 'assets'),
      prefix: '/console/assets/',
      index: false,
      cacheControl: false,
      setHeaders: (response) => response.setHeader('cache-control', IMMUTABLE),
    })
  })
}

/**
 * The built index.html with a `<base href>` of the console's path under PUBLIC_URL: its asset URLs are relative,
 * and resolve from there however deep the page's own path is. Undefined when the console was not built.
 */
async function readIndex(root: string, base: string): Promise<string | undefined> {
  let html: string
  try {
    html = await readFile(join(root, 'index.html'), 'utf8')
  } catch {
    return undefined
  }
  return html.replace('<head>', `<head>\n    <base href="${base}" />`)
}
