import type { FastifyBaseLogger } from 'fastify'
import { type JSONWebKeySet, type JWTVerifyGetKey, createLocalJWKSet, errors as joseErrors } from 'jose'
import type { Dispatcher } from 'undici'
import type { Clock } from '../../platform/clock.js'
import { guardedRequest } from '../../platform/outbound/fetch.js'
import { classifyNetworkError } from '../../platform/outbound/guarded-agent.js'
import type { RegisteredClient } from './client-store.js'

export interface ClientKeySetOptions {
  /** How long a fetched JWK Set is used before it is fetched again. */
  ttlMs?: number
  /** The least time between two fetches of one client's set when an assertion names a `kid` it lacks. */
  refetchCooldownMs?: number
  /** How long a failed fetch is remembered, so a dead or hostile `jwks_uri` isn't fetched on every request. */
  failureBackoffMs?: number
  timeoutMs?: number
  maxResponseBytes?: number
  /** `HERALD_WEBHOOK_ALLOW_HTTP`: accept plain-http `jwks_uri` values (tests and development). */
  allowHttp?: boolean
}

export const JWKS_CACHE_TTL_MS = 5 * 60_000
export const JWKS_REFETCH_COOLDOWN_MS = 30_000
export const JWKS_FAILURE_BACKOFF_MS = 10_000
const JWKS_TIMEOUT_MS = 5000
const JWKS_MAX_BYTES = 64 * 1024
const JWKS_MAX_KEYS = 100
/** Remote sets cached at once; the least recently fetched go first beyond this. */
const MAX_CACHED_SETS = 10_000

/** The client's `jwks_uri` could not be fetched or did not hold a usable JWK Set; the reason was logged. */
export class KeySetUnavailableError extends Error {
  constructor() {
    super("The client's JWK Set could not be retrieved")
    this.name = 'KeySetUnavailableError'
  }
}

interface FetchedSet {
  uri: string
  keys: JWTVerifyGetKey
  fetchedAt: number
}

interface FailedFetch {
  uri: string
  retryAt: number
}

/**
 * The public keys a client signs its JWTs with: its inline `jwks`, or its `jwks_uri` fetched through the
 * SSRF-guarded agent. A fetched set is cached per client for `ttlMs`; an assertion naming a `kid` the set lacks
 * triggers one refetch, at most once per `refetchCooldownMs`, so nobody can make Herald fetch at will. Failures
 * are remembered only briefly (`failureBackoffMs`) and a stale set is never used after its TTL.
 */
export class ClientKeySets {
  readonly #inline = new WeakMap<RegisteredClient, JWTVerifyGetKey>()
  readonly #fetched = new Map<string, FetchedSet>()
  readonly #failed = new Map<string, FailedFetch>()
  readonly #inflight = new Map<string, Promise<FetchedSet>>()
  readonly #options: Required<ClientKeySetOptions>

  constructor(
    private readonly agent: Dispatcher,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
    options: ClientKeySetOptions = {},
  ) {
    this.#options = {
      ttlMs: JWKS_CACHE_TTL_MS,
      refetchCooldownMs: JWKS_REFETCH_COOLDOWN_MS,
      failureBackoffMs: JWKS_FAILURE_BACKOFF_MS,
      timeoutMs: JWKS_TIMEOUT_MS,
      maxResponseBytes: JWKS_MAX_BYTES,
      allowHttp: false,
      ...options,
    }
  }

  /**
   * The key lookup for `jwtVerify`. It is lazy: jose calls it only after the JWT parsed and its `alg` was allowed,
   * so a malformed assertion never causes a fetch. Rejects with `KeySetUnavailableError` when the set can't be had.
   */
  keysOf(client: RegisteredClient): JWTVerifyGetKey {
    const { jwks, jwks_uri: uri } = client.metadata
    if (jwks !== null) return this.#inlineKeys(client, jwks)
    if (uri === null) {
      return () => Promise.reject(new KeySetUnavailableError())
    }
    const cacheKey = `${client.accountId}/${client.id}`
    return async (header, token) => {
      const set = await this.#current(cacheKey, uri, client)
      try {
        return await set.keys(header, token)
      } catch (error) {
        if (!(error instanceof joseErrors.JWKSNoMatchingKey)) throw error
        // An unknown kid usually means the client rotated its keys: look once more, but not more often than the cooldown.
        if (this.clock.now() - set.fetchedAt < this.#options.refetchCooldownMs) throw error
        const refreshed = await this.#fetch(cacheKey, uri, client).catch(() => undefined)
        if (!refreshed) throw error
        return refreshed.keys(header, token)
      }
    }
  }

  #inlineKeys(client: RegisteredClient, jwks: NonNullable<RegisteredClient['metadata']['jwks']>): JWTVerifyGetKey {
    // Cached per client object: the client cache hands out a new object when the client changes.
    let keys = this.#inline.get(client)
    if (!keys) {
      keys = createLocalJWKSet(jwks as JSONWebKeySet)
      this.#inline.set(client, keys)
    }
    return keys
  }

  async #current(cacheKey: string, uri: string, client: RegisteredClient): Promise<FetchedSet> {
    const cached = this.#fetched.get(cacheKey)
    if (cached && cached.uri === uri && this.clock.now() < cached.fetchedAt + this.#options.ttlMs) return cached
    const failed = this.#failed.get(cacheKey)
    if (failed && failed.uri === uri && this.clock.now() < failed.retryAt) throw new KeySetUnavailableError()
    return this.#fetch(cacheKey, uri, client)
  }

  /** One fetch per client at a time: concurrent requests share it. */
  #fetch(cacheKey: string, uri: string, client: RegisteredClient): Promise<FetchedSet> {
    const pending = this.#inflight.get(cacheKey)
    if (pending) return pending
    const fetching = this.#download(uri)
      .then(
        (keys) => {
          const set = { uri, keys, fetchedAt: this.clock.now() }
          this.#failed.delete(cacheKey)
          this.#fetched.delete(cacheKey)
          this.#fetched.set(cacheKey, set)
          evictOldest(this.#fetched)
          return set
        },
        (error: unknown) => {
          this.log.warn(
            { accountId: client.accountId, clientId: client.id, jwksUri: uri, reason: failureReason(error) },
            "could not fetch a client's jwks_uri",
          )
          this.#failed.delete(cacheKey)
          this.#failed.set(cacheKey, { uri, retryAt: this.clock.now() + this.#options.failureBackoffMs })
          evictOldest(this.#failed)
          throw new KeySetUnavailableError()
        },
      )
      .finally(() => this.#inflight.delete(cacheKey))
    this.#inflight.set(cacheKey, fetching)
    return fetching
  }

  async #download(uri: string): Promise<JWTVerifyGetKey> {
    const url = new URL(uri)
    if (url.protocol !== 'https:' && !(this.#options.allowHttp && url.protocol === 'http:')) {
      throw new JwksDocumentError(`${url.protocol} is not allowed`)
    }
    const response = await guardedRequest(this.agent, {
      url,
      headers: { accept: 'application/jwk-set+json, application/json' },
      timeoutMs: this.#options.timeoutMs,
      maxResponseBytes: this.#options.maxResponseBytes,
    })
    if (response.status !== 200) throw new JwksDocumentError(`status ${response.status}`)
    if (response.truncated) throw new JwksDocumentError(`larger than ${this.#options.maxResponseBytes} bytes`)
    return createLocalJWKSet(parseJwkSet(response.bodyExcerpt))
  }
}

class JwksDocumentError extends Error {
  override name = 'JwksDocumentError'
}

/** A JWK Set of public keys (RFC 7517 §5), or an error saying why not. */
export function parseJwkSet(text: string): JSONWebKeySet {
  let document: unknown
  try {
    document = JSON.parse(text)
  } catch {
    throw new JwksDocumentError('not JSON')
  }
  if (typeof document !== 'object' || document === null || !Array.isArray((document as { keys?: unknown }).keys)) {
    throw new JwksDocumentError('not a JWK Set')
  }
  const keys = (document as { keys: unknown[] }).keys
  if (keys.length === 0 || keys.length > JWKS_MAX_KEYS) throw new JwksDocumentError(`holds ${keys.length} keys`)
  if (!keys.every((key) => typeof key === 'object' && key !== null && typeof (key as { kty?: unknown }).kty === 'string')) {
    throw new JwksDocumentError('holds a member that is not a JWK')
  }
  return { keys: keys as JSONWebKeySet['keys'] }
}

function failureReason(error: unknown): string {
  if (error instanceof JwksDocumentError || error instanceof joseErrors.JWKSInvalid) return error.message
  return classifyNetworkError(error)
}

function evictOldest(map: Map<string, unknown>): void {
  // Maps iterate in insertion order, and entries are re-inserted when refreshed: the first is the oldest.
  while (map.size > MAX_CACHED_SETS) {
    const oldest = map.keys().next().value
    if (oldest === undefined) return
    map.delete(oldest)
  }
}
