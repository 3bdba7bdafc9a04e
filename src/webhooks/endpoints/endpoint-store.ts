import type { Kysely } from 'kysely'
import type { CacheInvalidation } from '../../platform/cache/invalidation.js'
import { type Awaitable, andThen } from '../../platform/cache/awaitable.js'
import type { TtlCache } from '../../platform/cache/ttl-cache.js'
import type { SecretBox } from '../../platform/crypto/secret-box.js'
import { ProblemError, notFound } from '../../platform/http/problems.js'
import { looksLikeId } from '../../platform/ids.js'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { DB, EndpointStatus, WebhookEndpointsTable } from '../../platform/storage/schema.js'
import type { Tx } from '../../platform/storage/transaction.js'
import { secretKey } from '../delivery/signing.js'
import { matchesPattern } from '../events/event-types.js'

/** What a worker needs to send to an endpoint, decrypted once and cached. */
export interface DeliveryTarget {
  id: string
  accountId: string
  /** Parsed once per cache fill, not once per attempt. */
  url: URL
  status: EndpointStatus
  secret: Buffer
  /** The secret before the last rotation, and until when it still signs. */
  previous: { secret: Buffer; until: number } | null
  /** The client whose logout tokens this endpoint receives instead of signed events (ClientLogoutEndpoints). */
  clientId: string | null
}

/** Which endpoints an account's events go to: every subscription. */
export interface Route {
  endpointId: string
  patterns: readonly string[]
  /** The subscription's id, which orders it among the account's events (see FanOut). */
  subscriptionId: string
}

/**
 * Endpoint rows, their sealed secrets and the two caches the delivery path reads: targets by endpoint id and
 * routes by account. Every change goes through `changed`, so both caches drop what it touched on every process.
 */
export class EndpointStore {
  readonly #targets: TtlCache<DeliveryTarget>
  readonly #routes: TtlCache<Route[]>

  constructor(
    private readonly db: Kysely<DB>,
    private readonly box: SecretBox,
    private readonly invalidation: CacheInvalidation,
    private readonly dialect: SqlDialect,
  ) {
    this.#targets = invalidation.cache('webhook_endpoints')
    this.#routes = invalidation.cache('webhook_routes')
  }

  target(accountId: string, endpointId: string): Awaitable<DeliveryTarget | undefined> {
    return this.#targets.get(targetKey(accountId, endpointId), async () => {
      const row = await forAccount(this.db, accountId).selectFrom('webhook_endpoints').selectAll().where('id', '=', endpointId).executeTakeFirst()
      return row && this.#toTarget(row)
    })
  }

  /** `db` is the caller's transaction when there is one: SQLite has a single connection, which it holds. */
  async routes(db: Kysely<DB>, accountId: string): Promise<Route[]> {
    return (await this.#routes.get(accountId, () => this.#readRoutes(db, accountId))) ?? []
  }

  /** Whether some endpoint of the account subscribes to `type`; from the cached routes, without a read when cached. */
  isSubscribed(accountId: string, type: string): Awaitable<boolean> {
    return andThen(this.#routes.get(accountId, () => this.#readRoutes(this.db, accountId)), (routes = []) =>
      routes.some((route) => route.patterns.some((pattern) => matchesPattern(pattern, type))),
    )
  }

  async #readRoutes(db: Kysely<DB>, accountId: string): Promise<Route[]> {
    const rows = await forAccount(db, accountId).selectFrom('webhook_subscriptions').select(['id', 'endpoint_id', 'event_types']).execute()
    return rows.map((row) => ({ endpointId: row.endpoint_id, patterns: JSON.parse(row.event_types) as string[], subscriptionId: row.id }))
  }

  /**
   * `forChange` locks the row FOR UPDATE until `db`'s transaction ends (PostgreSQL): the caller writes what it read
   * into it, and may change its status (see Endpoints, #lockForStatusChange).
   */
  async read(db: Kysely<DB>, accountId: string, endpointId: string, forChange = false): Promise<WebhookEndpointsTable | undefined> {
    const query = forAccount(db, accountId).selectFrom('webhook_endpoints').selectAll().where('id', '=', endpointId)
    return (forChange ? this.dialect.forUpdate(query) : query).executeTakeFirst()
  }

  /** The endpoint's row, read as `read` does; 404 when the account has no endpoint of that id. */
  async existing(db: Kysely<DB>, accountId: string, endpointId: string, forChange = false): Promise<WebhookEndpointsTable> {
    const row = looksLikeId('ep', endpointId) ? await this.read(db, accountId, endpointId, forChange) : undefined
    if (!row) throw notFound(`Endpoint ${endpointId}`)
    return row
  }

  seal(accountId: string, endpointId: string, secret: string): string {
    return this.box.seal(secret, sealContext(accountId, endpointId))
  }

  open(row: Pick<WebhookEndpointsTable, 'account_id' | 'id'>, sealed: string): string {
    return this.box.open(sealed, sealContext(row.account_id, row.id))
  }

  /** Drops the endpoint, and its account's routes, from every process's caches once `tx` commits. */
  async changed(tx: Tx, accountId: string, endpointId: string): Promise<void> {
    await this.invalidation.record(tx, 'webhook_endpoints', targetKey(accountId, endpointId))
    await this.invalidation.record(tx, 'webhook_routes', accountId)
  }

  #toTarget(row: WebhookEndpointsTable): DeliveryTarget {
    const key = (sealed: string): Buffer => {
      const bytes = secretKey(this.open(row, sealed))
      if (!bytes) throw new Error(`endpoint ${row.id} has a malformed signing secret`)
      return bytes
    }
    return {
      id: row.id,
      accountId: row.account_id,
      url: new URL(row.url),
      status: row.status,
      secret: key(row.secret),
      previous: row.previous_secret && row.previous_secret_expires_at !== null ? { secret: key(row.previous_secret), until: row.previous_secret_expires_at } : null,
      clientId: row.client_id,
    }
  }
}

/** Both secrets of an endpoint share its identity: they are the same secret at two moments. */
function sealContext(accountId: string, endpointId: string): string {
  return `webhook_endpoint:${accountId}:${endpointId}`
}

/** An endpoint's cache key: its account's id and its own, so that one account's lookup never shares another's entry. */
function targetKey(accountId: string, endpointId: string): string {
  return `${accountId}/${endpointId}`
}

/** A client's logout endpoint goes with the client: what the client decides can't be changed here. */
export function refuseManaged(row: WebhookEndpointsTable, why: string): void {
  if (row.client_id !== null) throw new ProblemError('conflict', `Endpoint ${row.id} carries the back-channel logout of client ${row.client_id}: ${why}`)
}
