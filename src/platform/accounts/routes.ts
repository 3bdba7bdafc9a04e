import { Type } from 'typebox'
import { constantTimeEqual } from '../crypto/random.js'
import { ProblemError } from '../http/problems.js'
import { PageQuery, ProblemSchema } from '../http/schemas.js'
import type { App } from '../http/types.js'
import type { Accounts } from './accounts.js'

const AccountSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('disabled')]),
  issuer: Type.String({ format: 'uri' }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
})

/** Printable text with at least one visible character: no control characters, which logs and terminals mangle. */
export const AccountNameSchema = Type.String({ minLength: 1, maxLength: 200, pattern: '^(?=.*\\S)[^\\u0000-\\u001f\\u007f]+$' })

const CreatedAccountSchema = Type.Object({
  account: AccountSchema,
  admin_client: Type.Object({ client_id: Type.String(), client_secret: Type.String() }),
})

const AccountIdParams = Type.Object({ accountId: Type.String({ maxLength: 64 }) })

/**
 * The operator API: accounts are created, listed, disabled and enabled by whoever runs Herald, with the
 * operator token from the configuration. Without one configured these routes do not exist.
 */
export function operatorRoutes(app: App, deps: { accounts: Accounts; operatorToken: string }): void {
  app.addHook('onRequest', async (request) => {
    const match = /^Bearer (\S+)$/i.exec(request.headers.authorization ?? '')
    if (!match?.[1] || !constantTimeEqual(match[1], deps.operatorToken)) {
      throw new ProblemError('invalid_token', 'The operator token is missing or wrong')
    }
  })

  const errors = { '4xx': ProblemSchema }

  app.post(
    '/accounts',
    {
      bodyLimit: 4096,
      schema: {
        summary: 'Creates an account with its keys, settings and first management client',
        tags: ['operator'],
        body: Type.Object({ name: AccountNameSchema }, { additionalProperties: false }),
        response: { 201: CreatedAccountSchema, ...errors },
      },
    },
    async (request, reply) => reply.status(201).send(await deps.accounts.create(request.body.name.trim())),
  )

  app.get(
    '/accounts',
    { schema: { summary: 'Lists accounts', tags: ['operator'], querystring: PageQuery, response: { 200: Type.Object({ data: Type.Array(AccountSchema), next_cursor: Type.Union([Type.String(), Type.Null()]) }), ...errors } } },
    async (request) => deps.accounts.list(request.query.limit, request.query.cursor),
  )

  app.get(
    '/accounts/:accountId',
    { schema: { summary: 'Reads an account', tags: ['operator'], params: AccountIdParams, response: { 200: AccountSchema, ...errors } } },
    async (request) => deps.accounts.get(request.params.accountId),
  )

  app.patch(
    '/accounts/:accountId',
    {
      bodyLimit: 4096,
      schema: {
        summary: 'Disables or enables an account',
        tags: ['operator'],
        params: AccountIdParams,
        body: Type.Object({ status: Type.Union([Type.Literal('active'), Type.Literal('disabled')]) }, { additionalProperties: false }),
        response: { 200: AccountSchema, ...errors },
      },
    },
    async (request) => deps.accounts.setStatus(request.params.accountId, request.body.status),
  )
}
