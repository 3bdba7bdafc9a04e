import swagger from '@fastify/swagger'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify from 'fastify'
import { discoveryRoutes, metadataRoute } from './authorization/discovery/routes.js'
import { tokenRoutes } from './authorization/token/routes.js'
import type { Herald } from './herald.js'
import { operatorRoutes } from './platform/accounts/routes.js'
import { accountScope } from './platform/http/account-scope.js'
import { installErrorHandling } from './platform/http/error-handler.js'
import { installFormParser } from './platform/http/form-body.js'
import { healthRoutes } from './platform/http/health.js'
import type { App } from './platform/http/types.js'
import { installValidation } from './platform/http/validation.js'
import { keyRoutes } from './platform/keys/routes.js'

/** JSON bodies larger than this are refused unless a route sets its own limit. */
const DEFAULT_BODY_LIMIT = 64 * 1024

/** Builds the HTTP server without listening, so tests and `herald serve` run the very same app. */
export async function buildServer(herald: Herald): Promise<App> {
  const app = Fastify({
    loggerInstance: herald.log,
    bodyLimit: DEFAULT_BODY_LIMIT,
    trustProxy: true,
    return503OnClosing: true,
  }).withTypeProvider<TypeBoxTypeProvider>()

  installValidation(app)
  installErrorHandling(app)
  installFormParser(app)

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Herald',
        version: '0.1.0',
        description: 'OAuth 2.0 / OpenID Connect authorization and webhook delivery, per account.',
      },
      servers: [{ url: herald.config.publicUrl }],
      components: {
        securitySchemes: {
          managementToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: "An access token from the account's own token endpoint" },
          operatorToken: { type: 'http', scheme: 'bearer', description: 'HERALD_OPERATOR_TOKEN' },
        },
      },
    },
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())

  healthRoutes(app, herald.database.db)

  const { operatorToken } = herald.config
  if (operatorToken) {
    await app.register(async (operator) => operatorRoutes(operator, { accounts: herald.accounts, operatorToken }))
  }

  await app.register(
    async (base) => {
      await accountScope(base, herald)
      keyRoutes(base, { db: herald.database.db, keys: herald.keys, settings: herald.settings, clock: herald.clock })
      tokenRoutes(base, herald)
      discoveryRoutes(base)
    },
    { prefix: '/accounts/:accountId' },
  )

  // RFC 8414 §3.1: the well-known segment goes between the host and the issuer's path.
  await app.register(
    async (wellKnown) => {
      await accountScope(wellKnown, herald)
      metadataRoute(wellKnown, '')
    },
    { prefix: '/.well-known/oauth-authorization-server/accounts/:accountId' },
  )

  return app
}
