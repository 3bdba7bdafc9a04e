import { type Kysely, type RawBuilder, sql } from 'kysely'
import type { Clock } from '../../platform/clock.js'
import type { Awaitable } from '../../platform/cache/awaitable.js'
import type { TtlCache } from '../../platform/cache/ttl-cache.js'
import type { CacheInvalidation } from '../../platform/cache/invalidation.js'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import type { ClientKind, ClientSource, ClientsTable, DB, TokenEndpointAuthMethod } from '../../platform/storage/schema.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { Tx } from '../../platform/storage/transaction.js'
import { inList } from '../../platform/storage/in-list.js'
import { sha256 } from '../../platform/crypto/random.js'
import { looksLikeId } from '../../platform/ids.js'
import { isDocumentClientId } from '../client-documents/client-id-url.js'
import { type ClientMetadata, DEFAULT_METADATA, clientKind, scopesOf } from './client-metadata.js'
import { SharedValues, parseShared, sharedList, sharedString } from '../../platform/cache/shared-values.js'

/** A client as the token endpoint and management auth use it, parsed once per cache load. */
export interface RegisteredClient {
  id: string
  accountId: string
  kind: ClientKind
  source: ClientSource
  secretHash: string | null
  tokenEndpointAuthMethod: TokenEndpointAuthMethod
  grantTypes: ReadonlySet<string>
  /** The scopes the client may request, in registration order; requesting none grants them all. */
  scopes: readonly string[]
  metadata: ClientMetadata
  /** A digest of the stored metadata (base64url), to tell a reloaded row that changed from one that did not (see isRowOf). */
  metadataDigest: string
  /**
   * The credentials_changed_at column: when the credentials last changed, in ms, but never the same value twice
   * (see nextCredentialsVersion), so tokens carry it as the version they were issued under.
   */
  credentialsVersion: number
  createdAt: number
  updatedAt: number
}

/**
 * The clients of every account. `find` serves the token endpoint from an in-process cache; every write
 * invalidates the client's entry here and, through NOTIFY, in every other process.
 */
export class ClientStore {
  readonly #cache: TtlCache<RegisteredClient>

  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: SqlDialect,
    private readonly clock: Clock,
    private readonly invalidation: CacheInvalidation,
  ) {
    this.#cache = invalidation.cache('client', { batch: (keys, cached) => this.#readMany(keys, cached) })
  }

  /** The client, from the cache: the token endpoint never reads clients from the database per request. */
  find(accountId: string, clientId: string): Awaitable<RegisteredClient | undefined> {
    if (!isClientId(clientId)) return undefined
    return this.#cache.get(cacheKey(accountId, clientId))
  }

  /**
   * The clients named by cache keys; a row counts only under its own account's key. A cached client whose row is
   * unchanged is kept as it is, without parsing its metadata again.
   */
  async #readMany(keys: readonly string[], cached: (key: string) => RegisteredClient | undefined): Promise<Map<string, RegisteredClient>> {
    const pairs = keys.map(splitCacheKey)
    const rows = await this.db
      .selectFrom('clients')
      .selectAll()
      .where('account_id', 'in', inList(pairs.map(([accountId]) => accountId)))
      .where('id', 'in', inList(pairs.map(([, clientId]) => clientId)))
      .execute()
    const wanted = new Set(keys)
    const found = new Map<string, RegisteredClient>()
    for (const row of rows) {
      const key = cacheKey(row.account_id, row.id)
      if (!wanted.has(key)) continue
      const previous = cached(key)
      found.set(key, previous && isRowOf(previous, row) ? previous : fromRow(row))
    }
    return found
  }

  /**
   * `forChange` locks the row FOR UPDATE until `db`'s transaction ends (PostgreSQL): the caller changes the client
   * from what it read, and two changes at once (an update and a delete) must see each other's outcome.
   */
  async read(db: Kysely<DB>, accountId: string, clientId: string, forChange = false): Promise<RegisteredClient | undefined> {
    if (!isClientId(clientId)) return undefined
    const query = forAccount(db, accountId).selectFrom('clients').selectAll().where('id', '=', clientId)
    const row = await (forChange ? this.dialect.forUpdate(query) : query).executeTakeFirst()
    return row && fromRow(row)
  }

  /** A page of the account's clients, oldest first, after the keyset position `after` (a client id). */
  async list(accountId: string, limit: number, after: string | undefined): Promise<RegisteredClient[]> {
    let query = forAccount(this.db, accountId).listFrom('clients', 'asc').selectAll().limit(limit)
    if (after !== undefined) query = query.where('id', '>', after)
    return (await query.execute()).map(fromRow)
  }

  async insert(tx: Tx, accountId: string, id: string, metadata: ClientMetadata, secretHash: string | null, source: ClientSource): Promise<RegisteredClient> {
    const now = this.clock.now()
    const row: ClientsTable = {
      id,
      account_id: accountId,
      ...columnsOf(metadata),
      source,
      secret_hash: secretHash,
      credentials_changed_at: now,
      created_at: now,
      updated_at: now,
    }
    await forAccount(tx.db, accountId).insertInto('clients', row).execute()
    await this.#insertScopes(tx, accountId, id, metadata)
    // Nothing caches a missing client, but per-account views of all clients (CORS origins) must refresh.
    await this.invalidation.record(tx, 'client', cacheKey(accountId, id))
    return fromRow(row)
  }

  /** Replaces the metadata; a changed secret (or its removal) also refuses tokens issued before. */
  async update(tx: Tx, client: RegisteredClient, metadata: ClientMetadata, secretHash: string | null): Promise<RegisteredClient> {
    const now = this.clock.now()
    const credentialsChanged = secretHash !== client.secretHash
    const changes = {
      ...columnsOf(metadata),
      secret_hash: secretHash,
      updated_at: now,
      ...(credentialsChanged && { credentials_changed_at: nextCredentialsVersion(now) }),
    }
    const account = forAccount(tx.db, client.accountId)
    await account.updateTable('clients').set(changes).where('id', '=', client.id).execute()
    await account.deleteFrom('client_scopes').where('client_id', '=', client.id).execute()
    await this.#insertScopes(tx, client.accountId, client.id, metadata)
    await this.invalidation.record(tx, 'client', cacheKey(client.accountId, client.id))
    const updated = await this.read(tx.db, client.accountId, client.id)
    if (!updated) throw new Error('client vanished inside its own transaction')
    return updated
  }

  /** Replaces the secret and refuses, from now on, the tokens issued under the old one. */
  async replaceSecret(tx: Tx, accountId: string, clientId: string, secretHash: string): Promise<boolean> {
    const now = this.clock.now()
    const result = await forAccount(tx.db, accountId)
      .updateTable('clients')
      .set({ secret_hash: secretHash, credentials_changed_at: nextCredentialsVersion(now), updated_at: now })
      .where('id', '=', clientId)
      .executeTakeFirst()
    await this.invalidation.record(tx, 'client', cacheKey(accountId, clientId))
    return result.numUpdatedRows > 0n
  }

  async delete(tx: Tx, accountId: string, clientId: string): Promise<boolean> {
    const account = forAccount(tx.db, accountId)
    await account.deleteFrom('client_scopes').where('client_id', '=', clientId).execute()
    const result = await account.deleteFrom('clients').where('id', '=', clientId).executeTakeFirst()
    await this.invalidation.record(tx, 'client', cacheKey(accountId, clientId))
    return result.numDeletedRows > 0n
  }

  /** The ids of the account's clients allowed `scope`, at most `limit` of them. */
  async clientsAllowing(tx: Tx, accountId: string, scope: string, limit: number): Promise<string[]> {
    const rows = await forAccount(tx.db, accountId)
      .selectFrom('client_scopes')
      .select('client_id')
      .where('scope', '=', scope)
      .orderBy('client_id')
      .limit(limit)
      .execute()
    return rows.map((row) => row.client_id)
  }

  async #insertScopes(tx: Tx, accountId: string, clientId: string, metadata: ClientMetadata): Promise<void> {
    const scopes = scopesOf(metadata)
    if (scopes.length > 0) await forAccount(tx.db, accountId).insertInto('client_scopes', scopes.map((scope) => ({ client_id: clientId, scope }))).execute()
  }
}

/**
 * Whether `client` was read from `row` as it is now. Every change of the credentials moves their version even within
 * one millisecond; `updated_at` need not move (two writes in one millisecond), so the metadata is compared by digest.
 */
function isRowOf(client: RegisteredClient, row: ClientsTable): boolean {
  return (
    client.updatedAt === row.updated_at &&
    client.credentialsVersion === row.credentials_changed_at &&
    client.secretHash === row.secret_hash &&
    client.metadataDigest === metadataDigestOf(row.metadata)
  )
}

/**
 * The new credentials version: the time, unless a change already took that millisecond (or the clock went back),
 * then one past the last. A reset in the same millisecond as the last change, or as a token's issue, still
 * refuses every token issued before it. One expression, so concurrent changes each move it on.
 */
function nextCredentialsVersion(now: number): RawBuilder<number> {
  return sql<number>`case when credentials_changed_at < ${now} then ${now} else credentials_changed_at + 1 end`
}

function cacheKey(accountId: string, clientId: string): string {
  return `${accountId}/${clientId}`
}

/** The account and the client of a cache key; a client id may be a URL, with slashes of its own. */
function splitCacheKey(key: string): [string, string] {
  const slash = key.indexOf('/')
  return [key.slice(0, slash), key.slice(slash + 1)]
}

/** Herald's own client ids, and the URLs of metadata documents (see client-documents). */
function isClientId(clientId: string): boolean {
  return looksLikeId('cli', clientId) || isDocumentClientId(clientId)
}

/** The columns derived from the metadata; the rest of the metadata is stored as one JSON document. */
function columnsOf(metadata: ClientMetadata): Pick<ClientsTable, 'name' | 'kind' | 'token_endpoint_auth_method' | 'grant_types' | 'scope' | 'metadata'> {
  return {
    name: metadata.client_name,
    kind: clientKind(metadata),
    token_endpoint_auth_method: metadata.token_endpoint_auth_method,
    grant_types: JSON.stringify(metadata.grant_types),
    scope: scopesOf(metadata).join(' '),
    metadata: JSON.stringify(metadata),
  }
}

/** One set per combination of grant types, shared by every client that has it: there are few, and many clients. */
const grantTypeSets = new SharedValues<ReadonlySet<string>>(64)

function grantTypeSet(grantTypes: readonly string[]): ReadonlySet<string> {
  return grantTypeSets.of([...grantTypes].sort().join(' '), () => new Set(grantTypes))
}

function metadataDigestOf(metadata: string): string {
  return sha256(metadata).toString('base64url')
}

/** Built from shared values (see SharedValues): the cache keeps one client per account, of much the same metadata. */
function fromRow(row: ClientsTable): RegisteredClient {
  // Metadata written by an older version lacks newer fields: the defaults fill them in.
  const metadata: ClientMetadata = { ...DEFAULT_METADATA, ...(parseShared(row.metadata) as Partial<ClientMetadata>) }
  return {
    id: row.id,
    accountId: row.account_id,
    kind: sharedString(row.kind),
    source: sharedString(row.source),
    secretHash: row.secret_hash,
    tokenEndpointAuthMethod: sharedString(row.token_endpoint_auth_method),
    grantTypes: grantTypeSet(metadata.grant_types),
    scopes: sharedList(scopesOf(metadata)),
    metadata,
    metadataDigest: metadataDigestOf(row.metadata),
    credentialsVersion: row.credentials_changed_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}
