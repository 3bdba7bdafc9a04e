import { Type } from 'typebox'
import { constantTimeEqual } from '../crypto/random.js'
import { routeNotFound } from '../http/error-handler.js'
import { OPERATOR } from '../http/openapi.js'
import { ProblemError } from '../http/problems.js'
import { PageOf, PageQuery, named, problemResponses, ref } from '../http/schemas.js'
import type { App } from '../http/types.js'
import type { Accounts } from './accounts.js'

const AccountSchema = named(
  'Account',
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    status: Type.Union([Type.Literal('active'), Type.Literal('disabled')]),
    issuer: Type.String({ format: 'uri' }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  }),
)

export const accountSchemas = [AccountSchema]

/** Printable text with at least one visible character: no control characters, which logs and terminals mangle. */
export const AccountNameSchema = Type.String({ minLength: 1, maxLength: 200, pattern: '^(?=.*\\S)[^\\u0000-\\u001f\\u007f]+$' })

const CreatedAccountSchema = Type.Object(
  {
    account: ref(AccountSchema),
    admin_client: Type.Object({ client_id: Type.String(), client_secret: Type.String() }, { description: "The account's first management client; its secret is shown only here" }),
  },
  { description: 'The account, created with its keys, settings and first management client' },
)

const AccountIdParams = Type.Object({ accountId: Type.String({ maxLength: 64 }) })

/**
 * The operator API: accounts are created, listed, disabled and enabled by whoever runs Herald, with the
 * operator token from the configuration. Without one configured these routes answer as routes that do not exist;
 * they are still registered so that the OpenAPI document describes them.
 */
export function operatorRoutes(app: App, deps: { accounts: Accounts; operatorToken: string | undefined }): void {
  const { operatorToken } = deps
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, security: OPERATOR }
  })
  app.addHook('onRequest', async (request) => {
    if (operatorToken === undefined) throw routeNotFound(request)
    const match = /^Bearer (\S+)$/i.exec(request.headers.authorization ?? '')
    if (!match?.[1] || !constantTimeEqual(match[1], operatorToken)) {
      throw new ProblemError('invalid_token', 'The operator token is missing or wrong')
    }
  })

  app.post(
    '/accounts',
    {
      bodyLimit: 4096,
      schema: {
        summary: 'Creates an account with its keys, settings and first management client',
        body: Type.Object({ name: AccountNameSchema }, { additionalProperties: false }),
        response: { 201: CreatedAccountSchema, ...problemResponses },
      },
    },
    async (request, reply) => reply.status(201).send(await deps.accounts.create(request.body.name.trim())),
  )

  app.get(
    '/accounts',
    { schema: { summary: 'Lists accounts', querystring: PageQuery, response: { 200: PageOf(ref(AccountSchema), 'A page of accounts, oldest first'), ...problemResponses } } },
    async (request) => deps.accounts.list(request.query.limit, request.query.cursor),
  )

  app.get(
    '/accounts/:accountId',
    { schema: { summary: 'Reads an account', params: AccountIdParams, response: { 200: ref(AccountSchema, 'The account'), ...problemResponses } } },
    async (request) => deps.accounts.get(request.params.accountId),
  )

  app.patch(
    '/accounts/:accountId',
    {
      bodyLimit: 4096,
      schema: {
        summary: 'Disables or enables an account',
        params: AccountIdParams,
        body: Type.Object({ status: Type.Union([Type.Literal('active'), Type.Literal('disabled')]) }, { additionalProperties: false }),
        response: { 200: ref(AccountSchema, 'The account as changed'), ...problemResponses },
      },
    },
    async (request) => deps.accounts.setStatus(request.params.accountId, request.body.status),
  )
}
