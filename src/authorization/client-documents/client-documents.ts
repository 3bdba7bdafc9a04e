import type { Kysely } from 'kysely'
import { LRUCache } from 'lru-cache'
import type { Dispatcher } from 'undici'
import { type Awaitable, andThen } from '../../platform/cache/awaitable.js'
import { canonicalJson } from '../../platform/canonical-json.js'
import type { Clock } from '../../platform/clock.js'
import type { DB } from '../../platform/storage/schema.js'
import { type Tx, transaction } from '../../platform/storage/transaction.js'
import type { ClientMetadata } from '../clients/client-metadata.js'
import type { ClientStore, RegisteredClient } from '../clients/client-store.js'
import { listScopeNames } from '../scopes/scope-store.js'
import { ClientDocumentError } from './client-document-error.js'
import { clientIdUrlProblem } from './client-id-url.js'
import { fetchClientDocument } from './document-fetch.js'
import { documentLifetimeMs } from './document-lifetime.js'
import { documentMetadata } from './document-metadata.js'

/** A document that could not be used is not fetched again for this long: naming it can't make Herald fetch at will. */
export const DOCUMENT_FAILURE_BACKOFF_MS = 10_000

export interface ClientDocumentOptions {
  /** `HERALD_WEBHOOK_ALLOW_HTTP`: http client_ids and jwks_uris are accepted (development and tests only). */
  allowHttp: boolean
  /** The most documents whose freshness is remembered (`HERALD_CACHE_SIZE`). */
  maxEntries: number
}

/**
 * Clients named by the URL of a Client ID Metadata Document. A document fetched and valid becomes (or refreshes) a
 * client row of the account, `source` metadata_document, with the URL as its id: the flows, consents and tokens that
 * refer to clients need no other kind. While the document is fresh by its caching headers (see document-lifetime.ts),
 * the client is served like any other, from ClientStore's in-process cache; once it is stale, the next request
 * fetches it again, and concurrent requests for one document share that fetch. Each account has its own row of one
 * URL: its scopes are checked against its own, and nothing of one account's resolution serves another.
 */
export class ClientDocuments {
  /** When each account's document goes stale, by `{account}/{url}`. */
  readonly #freshUntil: LRUCache<string, number>
  /** Documents that could not be used, with why, until they may be fetched again. */
  readonly #failed: LRUCache<string, { retryAt: number; error: ClientDocumentError }>
  readonly #fetching = new Map<string, Promise<RegisteredClient>>()

  constructor(
    private readonly db: Kysely<DB>,
    private readonly store: ClientStore,
    private readonly agent: Dispatcher,
    private readonly clock: Clock,
    private readonly options: ClientDocumentOptions,
  ) {
    this.#freshUntil = new LRUCache({ max: options.maxEntries })
    this.#failed = new LRUCache({ max: options.maxEntries })
  }

  /** The client of the document at `url`, or a ClientDocumentError that says why there is none. */
  resolve(accountId: string, url: string): Awaitable<RegisteredClient> {
    const key = `${accountId}/${url}`
    const freshUntil = this.#freshUntil.get(key)
    if (freshUntil === undefined || this.clock.now() >= freshUntil) return this.#refresh(key, accountId, url)
    // Deleted through the management API while fresh: fetched again.
    return andThen(this.store.find(accountId, url), (client) => client ?? this.#refresh(key, accountId, url))
  }

  #refresh(key: string, accountId: string, url: string): Promise<RegisteredClient> {
    const failed = this.#failed.get(key)
    if (failed !== undefined && this.clock.now() < failed.retryAt) return Promise.reject(failed.error)
    let fetching = this.#fetching.get(key)
    if (!fetching) {
      fetching = this.#fetch(key, accountId, url)
        .catch((error: unknown) => {
          if (error instanceof ClientDocumentError) this.#failed.set(key, { retryAt: this.clock.now() + DOCUMENT_FAILURE_BACKOFF_MS, error })
          throw error
        })
        .finally(() => this.#fetching.delete(key))
      this.#fetching.set(key, fetching)
    }
    return fetching
  }

  async #fetch(key: string, accountId: string, url: string): Promise<RegisteredClient> {
    const problem = clientIdUrlProblem(url, this.options.allowHttp)
    if (problem) throw new ClientDocumentError(`can't be fetched: its URL ${problem}`)
    const fetchedAt = this.clock.now()
    const document = await fetchClientDocument(this.agent, url)
    const save = () =>
      transaction(this.db, async (tx) => {
        const known = new Set(await listScopeNames(tx.db, accountId))
        const metadata = documentMetadata(url, document.text, known, { allowHttpOutbound: this.options.allowHttp })
        return this.#save(tx, accountId, url, metadata)
      })
    // Another process may insert the same client first (PostgreSQL): the second try finds its row.
    const client = await save().catch((error: unknown) => (isDuplicateKey(error) ? save() : Promise.reject(error)))
    this.#freshUntil.set(key, fetchedAt + documentLifetimeMs(document.headers, fetchedAt))
    this.#failed.delete(key)
    return client
  }

  /** Inserts the client, or updates it when its document changed; an unchanged document writes nothing. */
  async #save(tx: Tx, accountId: string, url: string, metadata: ClientMetadata): Promise<RegisteredClient> {
    const existing = await this.store.read(tx.db, accountId, url, true)
    if (!existing) return this.store.insert(tx, accountId, url, metadata, null, 'metadata_document')
    if (canonicalJson(existing.metadata) === canonicalJson(metadata)) return existing
    return this.store.update(tx, existing, metadata, null)
  }
}

/** PostgreSQL's unique_violation (SQLSTATE 23505); SQLite runs one write transaction at a time and never races here. */
function isDuplicateKey(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === '23505'
}
