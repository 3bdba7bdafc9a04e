import type { FastifyRequest } from 'fastify'
import type { Account, Accounts } from '../accounts/accounts.js'
import type { ManagementAuth, ManagementPrincipal } from '../management-auth/management-auth.js'
import type { ManagementScope } from '../management-auth/scopes.js'
import { looksLikeId } from '../ids.js'
import { ProblemError } from './problems.js'
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
  // The OpenAPI document shows which routes need a management token, and which scope.
  app.addHook('onRoute', (route) => {
    const scope = route.config?.scope
    if (scope !== undefined) route.schema = { ...route.schema, security: [{ managementToken: [scope] }] }
  })

  app.decorateRequest('account', null as unknown as Account)
  app.decorateRequest('issuer', '')
  app.decorateRequest('principal', null)

  app.addHook('onRequest', async (request: FastifyRequest) => {
    const { accountId } = request.params as { accountId: string }
    const account = looksLikeId('acct', accountId) ? await deps.accounts.findActive(accountId) : undefined
    if (!account) throw new ProblemError('not_found', 'No such account')
    request.account = account
    request.issuer = deps.accounts.issuerOf(account.id)
  })

  app.addHook('preHandler', async (request: FastifyRequest) => {
    const scope = request.routeOptions.config.scope
    if (scope === undefined) return
    request.principal = await deps.managementAuth.authenticate(request.account, request.issuer, request.headers.authorization, scope)
  })
}
