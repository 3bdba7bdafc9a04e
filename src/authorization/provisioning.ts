import type { AccountProvisioning, AdminCredentials } from '../platform/accounts/accounts.js'
import type { Clock } from '../platform/clock.js'
import { notFound } from '../platform/http/problems.js'
import { MANAGEMENT_SCOPES } from '../platform/management-auth/scopes.js'
import type { Tx } from '../platform/storage/transaction.js'
import { type ClientMetadata, DEFAULT_METADATA } from './clients/client-metadata.js'
import type { ClientStore } from './clients/client-store.js'
import { hashClientSecret, newClientSecret } from './clients/secrets.js'
import type { FlowStore } from './sign-in/flow-store.js'
import { insertOidcScopes } from './scopes/scope-store.js'

/** The management client every account starts with: machine-to-machine, allowed every reserved scope. */
const ADMIN_CLIENT_METADATA: ClientMetadata = {
  ...DEFAULT_METADATA,
  client_name: 'admin',
  grant_types: ['client_credentials'],
  token_endpoint_auth_method: 'client_secret_basic',
  scope: MANAGEMENT_SCOPES.join(' '),
}

/**
 * What the authorization area gives every new account (the OIDC scopes and its first management client), and what it
 * stops when the account is disabled (the sign-ins under way).
 */
export class AuthorizationProvisioning implements AccountProvisioning {
  constructor(
    private readonly clients: ClientStore,
    private readonly flows: FlowStore,
    private readonly clock: Clock,
  ) {}

  async provision(tx: Tx, accountId: string, adminClientId: string): Promise<AdminCredentials> {
    await insertOidcScopes(tx, accountId, this.clock.now())
    const secret = newClientSecret()
    await this.clients.insert(tx, accountId, adminClientId, ADMIN_CLIENT_METADATA, hashClientSecret(secret), 'management')
    return { client_id: adminClientId, client_secret: secret }
  }

  async resetAdminSecret(tx: Tx, accountId: string, adminClientId: string): Promise<AdminCredentials> {
    const secret = newClientSecret()
    if (!(await this.clients.replaceSecret(tx, accountId, adminClientId, hashClientSecret(secret)))) {
      throw notFound(`The management client ${adminClientId} of account ${accountId}`)
    }
    return { client_id: adminClientId, client_secret: secret }
  }

  async disable(tx: Tx, accountId: string, now: number): Promise<void> {
    await this.flows.close(tx.db, accountId, 'all', now)
  }
}
