import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import fastifyStatic from '@fastify/static'
import { CONSOLE_HEADERS } from './console.js'
import type { App } from './types.js'

/** Swagger UI's files, served from the installed swagger-ui-dist package: the reference loads nothing from elsewhere. */
const SWAGGER_UI_ROOT = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))

/** The two files the page uses; the package's others (its demo index.html, the petstore initializer) stay unserved. */
const SWAGGER_UI_FILES = new Set(['/swagger-ui-bundle.js', '/swagger-ui.css'])

/**
 * The console's headers with a policy of the reference's own, as strict: Swagger UI needs no inline script or style
 * and no eval; its stylesheet draws a few icons as `data:` SVG images, which cannot run script.
 */
export const API_REFERENCE_HEADERS = {
  ...CONSOLE_HEADERS,
  'content-security-policy': [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
}

/**
 * Starts Swagger UI on the page's container, from a file since the policy allows no inline script. No validator:
 * Swagger UI would otherwise show a badge fetched from validator.swagger.io with the document's URL in it.
 */
const START_SCRIPT = `const reference = document.getElementById('reference')
SwaggerUIBundle({ url: reference.dataset.openapiUrl, domNode: reference, validatorUrl: null, deepLinking: true, displayOperationId: true })
`

/**
 * Serves the API reference at `{PUBLIC_URL}/docs`: Swagger UI rendering /openapi.json in the browser. Its URLs are
 * absolute under PUBLIC_URL's path, as the console's are, so a proxy that strips that path still serves them.
 * The routes are hidden from the OpenAPI document: they are not part of the API.
 */
export async function apiReferenceRoutes(app: App, publicUrl: string): Promise<void> {
  const base = new URL(publicUrl).pathname.replace(/\/$/, '')
  const page = referencePage(base)
  await app.register(async (scope) => {
    scope.addHook('onSend', async (_request, reply) => {
      reply.headers(API_REFERENCE_HEADERS)
    })
    scope.get('/docs', { schema: { hide: true } }, async (_request, reply) => reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(page))
    scope.get('/docs/reference.js', { schema: { hide: true } }, async (_request, reply) =>
      reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(START_SCRIPT),
    )
    // Not content-hashed, so revalidated (by ETag) rather than kept: an upgrade of swagger-ui-dist is picked up at once.
    await scope.register(fastifyStatic, {
      root: SWAGGER_UI_ROOT,
      prefix: '/docs/assets/',
      index: false,
      cacheControl: false,
      allowedPath: (path) => SWAGGER_UI_FILES.has(path),
      setHeaders: (response) => response.setHeader('cache-control', 'no-cache'),
    })
  })
}

/** The page: Swagger UI's stylesheet and script, the start script, and the document's URL for it to read. */
function referencePage(base: string): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Herald API reference</title>
    <link rel="icon" href="data:," />
    <link rel="stylesheet" href="${base}/docs/assets/swagger-ui.css" />
  </head>
  <body>
    <div id="reference" data-openapi-url="${base}/openapi.json"></div>
    <script src="${base}/docs/assets/swagger-ui-bundle.js"></script>
    <script src="${base}/docs/reference.js"></script>
  </body>
</html>
`
}
