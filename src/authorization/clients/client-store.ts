import type { Kysely } from 'kysely'
import type { Clock } from '../../platform/clock.js'
import { TtlCache } from '../../platform/cache/ttl-cache.js'
import type { CacheInvalidation } from '../../platform/cache/invalidation.js'
import type { ClientKind, ClientsTable, DB, TokenEndpointAuthMethod } from '../../platform/storage/schema.js'
import type { Tx } from '../../platform/storage/transaction.js'

export type GrantType = 'client_credentials'

/** A client as the token endpoint and management auth use it, parsed once per cache load. */
export interface RegisteredClient {
  id: string
  accountId: string
  name: string
  kind: ClientKind
  secretHash: string | null
  tokenEndpointAuthMethod: TokenEndpointAuthMethod
  grantTypes: ReadonlySet<string>
  /** The scopes the client may request, in registration order; requesting none grants them all. */
  scopes: readonly string[]
  audience: string | null
  accessTokenTtl: number | null
  credentialsChangedAt: number
}

export interface NewClient {
  id: string
  name: string
  kind: ClientKind
  secretHash: string | null
  tokenEndpointAuthMethod: TokenEndpointAuthMethod
  grantTypes: readonly GrantType[]
  scopes: readonly string[]
  audience: string | null
  accessTokenTtl: number | null
}

export class ClientStore {
  readonly #cache: TtlCache<RegisteredClient>

  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly invalidation: CacheInvalidation,
    cacheTtlMs: number,
  ) {
    this.#cache = new TtlCache(cacheTtlMs, clock)
    invalidation.onChange((topic, key) => topic === 'client' && this.#cache.delete(key))
    invalidation.onFlush(() => this.#cache.clear())
  }

  /** The client, from the cache: the token endpoint never reads clients from the database per request. */
  find(accountId: string, clientId: string): Promise<RegisteredClient | undefined> {
    return this.#cache.get(cacheKey(accountId, clientId), async () => {
      const row = await this.db
        .selectFrom('clients')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('id', '=', clientId)
        .executeTakeFirst()
      return row && fromRow(row)
    })
  }

  async insert(tx: Tx, accountId: string, client: NewClient): Promise<void> {
    const now = this.clock.now()
    await tx.db
      .insertInto('clients')
      .values({
        id: client.id,
        account_id: accountId,
        name: client.name,
        kind: client.kind,
        secret_hash: client.secretHash,
        token_endpoint_auth_method: client.tokenEndpointAuthMethod,
        grant_types: JSON.stringify(client.grantTypes),
        scope: client.scopes.join(' '),
        audience: client.audience,
        access_token_ttl: client.accessTokenTtl,
        credentials_changed_at: now,
        created_at: now,
        updated_at: now,
      })
      .execute()
  }

  /** Replaces the secret and refuses, from now on, the tokens issued under the old one. */
  async replaceSecret(tx: Tx, accountId: string, clientId: string, secretHash: string): Promise<boolean> {
    const now = this.clock.now()
    const result = await tx.db
      .updateTable('clients')
      .set({ secret_hash: secretHash, credentials_changed_at: now, updated_at: now })
      .where('account_id', '=', accountId)
      .where('id', '=', clientId)
      .executeTakeFirst()
    await this.invalidation.changed(tx, 'client', cacheKey(accountId, clientId))
    return result.numUpdatedRows > 0n
  }
}

function cacheKey(accountId: string, clientId: string): string {
  return `${accountId}/${clientId}`
}

function fromRow(row: ClientsTable): RegisteredClient {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    kind: row.kind,
    secretHash: row.secret_hash,
    tokenEndpointAuthMethod: row.token_endpoint_auth_method,
    grantTypes: new Set(JSON.parse(row.grant_types) as string[]),
    scopes: row.scope.split(' ').filter(Boolean),
    audience: row.audience,
    accessTokenTtl: row.access_token_ttl,
    credentialsChangedAt: row.credentials_changed_at,
  }
}
