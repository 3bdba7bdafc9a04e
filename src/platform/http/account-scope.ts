import type { FastifyRequest } from 'fastify'
import type { Account, Accounts } from '../accounts/accounts.js'
import { andThen } from '../cache/awaitable.js'
import type { ManagementAuth, ManagementPrincipal } from '../management-auth/management-auth.js'
import type { ManagementScope } from '../management-auth/scopes.js'
import { PUBLIC } from './openapi.js'
import { ProblemError } from './problems.js'
import { appendHook, awaitableHook } from './route-hooks.js'
import type { App } from './types.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The enabled account whose base URL the request addresses. */
    account: Account
    issuer: string
    principal: ManagementPrincipal | null
  }
  interface FastifyContextConfig {
    /** The management scope a route requires; routes without one are public (token endpoint, JWKS, discovery). */
    scope?: ManagementScope
  }
}

export interface AccountScopeDeps {
  accounts: Accounts
  managementAuth: ManagementAuth
}

/**
 * Everything under `/accounts/{account_id}`: resolves the account (404 when it does not exist or is disabled,
 * so a disabled account's endpoints vanish) and enforces each route's management scope.
 */
export async function accountScope(app: App, deps: AccountScopeDeps): Promise<void> {
  // Only routes that require a scope get the check (public routes, the token endpoint among them, pay
  // nothing for it), and the OpenAPI document shows which scope each one needs. A route without one is public
  // unless it names its own requirement (the OAuth endpoints' client authentication).
  app.addHook('onRoute', (route) => {
    const scope = route.config?.scope
    if (scope === undefined) {
      route.schema = { ...route.schema, security: route.schema?.security ?? PUBLIC }
      return
    }
    route.schema = { ...route.schema, security: [{ managementToken: [scope] }] }
    route.preHandler = appendHook(route.preHandler, async (request: FastifyRequest) => {
      request.principal = await deps.managementAuth.authenticate(request.account, request.issuer, request.headers.authorization, scope)
    })
  })

  app.decorateRequest('account', null as unknown as Account)
  app.decorateRequest('issuer', '')
  app.decorateRequest('principal', null)

  app.addHook(
    'onRequest',
    awaitableHook((request) => {
      const { accountId } = request.params as { accountId: string }
      // findActive reads the database only for a well-formed id.
      return andThen(deps.accounts.findActive(accountId), (found) => {
        if (!found) throw new ProblemError('not_found', 'No such account')
        request.account = found
        request.issuer = deps.accounts.issuerOf(found.id)
      })
    }),
  )
}

/** The caller of a route that requires a management scope: its hook has authenticated it before the handler runs. */
export function principalOf(request: FastifyRequest): ManagementPrincipal {
  if (!request.principal) throw new Error(`${request.routeOptions.url ?? request.url} requires no management scope, so it has no principal`)
  return request.principal
}
