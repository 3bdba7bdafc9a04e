import { Type } from 'typebox'
import { problemResponses } from '../../platform/http/schemas.js'
import type { App } from '../../platform/http/types.js'
import { type ConsoleLinks, DEFAULT_LINK_SCOPES, MAX_LINK_LIFETIME_SECONDS } from './console-links.js'

const AccountIdParams = Type.Object({ accountId: Type.String({ maxLength: 64 }) })

const CreateBody = Type.Object(
  {
    scope: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: `Space-separated management scopes the console gets (default: ${DEFAULT_LINK_SCOPES.join(' ')})` })),
    expires_in: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LINK_LIFETIME_SECONDS, description: `Seconds the link stays usable (at most and by default ${MAX_LINK_LIFETIME_SECONDS})` })),
  },
  { additionalProperties: false },
)

const CreatedLink = Type.Object(
  {
    url: Type.String({ description: "The console's address with the link's code in its fragment; open it once" }),
    expires_at: Type.String({ format: 'date-time' }),
    scope: Type.String(),
  },
  { description: 'A single-use sign-in link to the console' },
)

const ExchangeBody = Type.Object({ code: Type.String({ minLength: 1, maxLength: 128, description: "The `link` parameter of the link's fragment" }) }, { additionalProperties: false })

const ConsoleToken = Type.Object(
  {
    access_token: Type.String(),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ description: 'At most 900 seconds' }),
    scope: Type.String(),
  },
  { description: "A management token of the account's original management client, with the link's scopes" },
)

/** The operator's side: a link for an account (`herald console-link` does the same). Registered with the operator routes. */
export function consoleLinkOperatorRoutes(app: App, links: ConsoleLinks): void {
  app.post(
    '/accounts/:accountId/console-links',
    {
      bodyLimit: 4096,
      schema: { summary: 'Makes a single-use sign-in link to the console for the account', params: AccountIdParams, body: CreateBody, response: { 201: CreatedLink, ...problemResponses } },
    },
    async (request, reply) => {
      const scopes = request.body.scope?.split(' ').filter(Boolean)
      return reply.status(201).send(await links.create(request.params.accountId, scopes, request.body.expires_in))
    },
  )
}

/** The console's side: it spends the code from the link's fragment once, for a token held in memory. */
export function consoleLinkRoutes(app: App, links: ConsoleLinks): void {
  app.post(
    '/console-links/exchange',
    {
      bodyLimit: 1024,
      schema: {
        summary: "Exchanges a console sign-in link's code, once, for a short-lived management token",
        security: [],
        body: ExchangeBody,
        response: { 200: ConsoleToken, ...problemResponses },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store')
      return links.exchange(request.account.id, request.issuer, request.body.code)
    },
  )
}
