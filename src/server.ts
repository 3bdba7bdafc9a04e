import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyServerOptions } from 'fastify'
import { discoveryRoutes, metadataRoute } from './authorization/discovery/routes.js'
import { introspectionRoutes } from './authorization/introspection/routes.js'
import { revocationRoutes } from './authorization/revocation/routes.js'
import { tokenRoutes } from './authorization/token/routes.js'
import { authorizeRoutes } from './authorization/sign-in/authorize-routes.js'
import { challengeRoutes, challengeSchemas } from './authorization/sign-in/challenge-routes.js'
import { parRoutes } from './authorization/sign-in/par-routes.js'
import { deviceAuthorizationRoutes } from './authorization/device/device-authorization-routes.js'
import { deviceBrowserRoutes, deviceRequestRoutes, deviceSchemas } from './authorization/device/device-verification-routes.js'
import { userinfoRoutes } from './authorization/userinfo/routes.js'
import { sessionRoutes, sessionSchemas } from './authorization/sessions/routes.js'
import { logoutRequestRoutes, logoutRoutes, logoutSchemas } from './authorization/logout/routes.js'
import { consoleLinkOperatorRoutes, consoleLinkRoutes } from './authorization/console-links/routes.js'
import type { Herald } from './herald.js'
import { accountSchemas, operatorRoutes } from './platform/accounts/routes.js'
import { accountScope } from './platform/http/account-scope.js'
import { answerClientError } from './platform/http/client-errors.js'
import { apiReferenceRoutes } from './platform/http/api-reference.js'
import { consoleRoutes } from './platform/http/console.js'
import { installCors } from './platform/http/cors.js'
import { installErrorHandling, sendProblem } from './platform/http/error-handler.js'
import { ProblemError } from './platform/http/problems.js'
import { installFormParser } from './platform/http/form-body.js'
import { installJsonParser } from './platform/http/json-body.js'
import { installOpenApi } from './platform/http/openapi.js'
import { addSharedSchemas, errorSchemas } from './platform/http/schemas.js'
import { healthRoutes } from './platform/http/health.js'
import type { App } from './platform/http/types.js'
import { installValidation } from './platform/http/validation.js'
import { keyRoutes, keySchemas } from './platform/keys/routes.js'
import { requestLoggerFactory } from './platform/logger.js'
import { cidrContains } from './platform/outbound/addresses.js'
import { settingsRoutes, settingsSchemas } from './platform/settings/routes.js'
import { scopeRoutes, scopeSchemas } from './authorization/scopes/routes.js'
import { clientRoutes, clientSchemas } from './authorization/clients/routes.js'
import { registrationRoutes, registrationSchemas } from './authorization/registration/routes.js'
import { registrationTokenRoutes, registrationTokenSchemas } from './authorization/registration/token-routes.js'
import { deliveryRoutes, deliverySchemas } from './webhooks/delivery/routes.js'
import { endpointRoutes, endpointSchemas } from './webhooks/endpoints/routes.js'
import { endpointStatsRoutes, statsSchemas } from './webhooks/endpoints/stats-routes.js'
import { eventRoutes, eventSchemas } from './webhooks/events/routes.js'
import { subscriptionRoutes, subscriptionSchemas } from './webhooks/subscriptions/routes.js'

/** JSON bodies larger than this are refused unless a route sets its own limit. */
const DEFAULT_BODY_LIMIT = 64 * 1024

/**
 * `herald worker`'s HTTP server (on `HERALD_WORKER_PORT`): health checks and the metrics of this process, whose
 * attempt counters and histograms no other process can report.
 */
export async function buildWorkerServer(herald: Herald): Promise<App> {
  const app = Fastify(processServerOptions(herald)).withTypeProvider<TypeBoxTypeProvider>()
  installErrorHandling(app)
  addSharedSchemas(app, errorSchemas)
  operationsRoutes(app, herald)
  return app
}

/**
 * What every server of a Herald process shares: its logger, request loggers made only when used, 503 while closing,
 * and problem documents for requests the HTTP parser refuses.
 */
function processServerOptions(herald: Herald): FastifyServerOptions {
  return {
    loggerInstance: herald.log,
    childLoggerFactory: requestLoggerFactory,
    return503OnClosing: true,
    clientErrorHandler: (error, socket) => answerClientError(herald.log, error, socket),
  }
}

/** What every Herald process answers: liveness, readiness and Prometheus metrics. */
function operationsRoutes(app: App, herald: Herald): void {
  healthRoutes(app, herald.database.db)
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    const { registry } = herald.webhooks.metrics
    return reply.type(registry.contentType).send(await registry.metrics())
  })
}

/** Builds the HTTP server without listening, so tests and `herald serve` run the very same app. */
export async function buildServer(herald: Herald): Promise<App> {
  const app = Fastify({
    ...processServerOptions(herald),
    bodyLimit: DEFAULT_BODY_LIMIT,
    // X-Forwarded-For counts only when the peer that sent it is a trusted proxy, hop by hop from the nearest.
    trustProxy: (address: string) => herald.config.trustedProxies.some((cidr) => cidrContains(cidr, address)),
    // Scope names may be up to 128 characters; longer path segments can't name anything.
    routerOptions: { maxParamLength: 200 },
    // Errors the router raises before any route runs: a malformed percent-encoding, an over-long segment.
    frameworkErrors: (error, _request, reply) =>
      sendProblem(reply, error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? new ProblemError('not_found', 'No such resource') : new ProblemError('bad_request', 'The request URL is malformed')),
  }).withTypeProvider<TypeBoxTypeProvider>()

  installValidation(app)
  installErrorHandling(app)
  installJsonParser(app)
  // The management API speaks JSON only; Fastify's default text parser would let text/plain through.
  app.removeContentTypeParser('text/plain')

  addSharedSchemas(app, [...errorSchemas, ...accountSchemas, ...keySchemas, ...settingsSchemas, ...scopeSchemas, ...clientSchemas, ...registrationSchemas, ...registrationTokenSchemas, ...endpointSchemas, ...statsSchemas, ...subscriptionSchemas, ...eventSchemas, ...deliverySchemas, ...challengeSchemas, ...deviceSchemas, ...sessionSchemas, ...logoutSchemas])
  await installOpenApi(app, herald.config.publicUrl)

  operationsRoutes(app, herald)
  await consoleRoutes(app, herald.config.publicUrl)
  await apiReferenceRoutes(app, herald.config.publicUrl)

  await app.register(async (operator) => {
    operatorRoutes(operator, { accounts: herald.accounts, operatorToken: herald.config.operatorToken })
    consoleLinkOperatorRoutes(operator, herald.consoleLinks)
  })

  await app.register(
    async (base) => {
      await accountScope(base, herald)
      // DESIGN: browsers may call the token, revocation and userinfo endpoints from a client's registered origins,
      // and fetch the public JWKS from anywhere; introspection (for resource servers), authorize, PAR and the
      // management API never answer CORS.
      installCors(base, herald.corsOrigins, {
        '/oauth/tokens': 'client-origins',
        '/oauth/revoke': 'client-origins',
        '/oauth/userinfo': 'client-origins',
        '/.well-known/jwks.json': 'any-origin',
      })
      keyRoutes(base, { db: herald.database.db, keys: herald.keys, settings: herald.settings, clock: herald.clock })
      // OAuth endpoints take form bodies only (RFC 6749 §3.2): JSON is refused there, and forms everywhere else.
      await base.register(async (oauth) => {
        oauth.removeAllContentTypeParsers()
        installFormParser(oauth)
        tokenRoutes(oauth, { ...herald, clientUse: herald.registration.clientUse })
        introspectionRoutes(oauth, herald)
        revocationRoutes(oauth, herald)
        const { signIn } = herald
        authorizeRoutes(oauth, { clients: herald.clientLookup, settings: herald.settings, flows: signIn.flows, authorizeFlow: signIn.authorizeFlow, clock: herald.clock })
        parRoutes(oauth, { db: herald.database.db, clientAuthentication: herald.clientAuthentication, settings: herald.settings, flows: signIn.flows, clock: herald.clock })
        userinfoRoutes(oauth, { accessTokens: herald.accessTokens, grants: herald.userGrants })
        deviceAuthorizationRoutes(oauth, { db: herald.database.db, clientAuthentication: herald.clientAuthentication, settings: herald.settings, devices: herald.device.devices, clock: herald.clock })
        deviceBrowserRoutes(oauth, { settings: herald.settings, clock: herald.clock, verification: herald.device.verification })
        logoutRoutes(oauth, { logouts: signIn.logouts, settings: herald.settings, clock: herald.clock })
      })
      challengeRoutes(base, herald.signIn.challenges)
      deviceRequestRoutes(base, herald.device.verification)
      sessionRoutes(base, herald.userSessions)
      logoutRequestRoutes(base, herald.signIn.logouts)
      discoveryRoutes(base, herald.settings)
      consoleLinkRoutes(base, herald.consoleLinks)
      settingsRoutes(base, { db: herald.database.db, settings: herald.settings })
      scopeRoutes(base, herald.scopes)
      clientRoutes(base, herald.clientAdmin)
      registrationRoutes(base, herald.registration.registration)
      registrationTokenRoutes(base, herald.registration.tokens)
      const { webhooks } = herald
      endpointRoutes(base, webhooks.endpoints, webhooks.endpointSecrets, webhooks.jobs, webhooks.testDeliveries)
      endpointStatsRoutes(base, webhooks.stats)
      subscriptionRoutes(base, webhooks.subscriptions)
      eventRoutes(base, webhooks.events)
      deliveryRoutes(base, webhooks.deliveries)
    },
    { prefix: '/accounts/:accountId' },
  )

  // RFC 8414 §3.1: the well-known segment goes between the host and the issuer's path.
  await app.register(
    async (wellKnown) => {
      await accountScope(wellKnown, herald)
      metadataRoute(wellKnown, '', herald.settings)
    },
    { prefix: '/.well-known/oauth-authorization-server/accounts/:accountId' },
  )

  return app
}
