import type { FastifyReply, FastifyRequest } from 'fastify'
import { type Awaitable, andThen } from '../cache/awaitable.js'
import type { CacheInvalidation } from '../cache/invalidation.js'
import type { TtlCache } from '../cache/ttl-cache.js'
import { appendHook, awaitableHook } from './route-hooks.js'
import type { App } from './types.js'

/**
 * Who may call a route from a browser: the origins any of the account's clients registered
 * (`allowed_cors_origins`), or anyone, for public documents such as the JWKS.
 */
export type CorsPolicy = 'client-origins' | 'any-origin'

/** What a preflight allows an allowed origin to send. */
export const PREFLIGHT_METHODS = 'GET, POST'
export const PREFLIGHT_HEADERS = 'authorization, content-type'
export const PREFLIGHT_MAX_AGE_SECONDS = 600

/** The account's clients with their registered origins, a page at a time; the client store provides it. */
export interface ClientOriginSource {
  list(accountId: string, limit: number, after: string | undefined): Promise<ReadonlyArray<{ id: string; metadata: { allowed_cors_origins: readonly string[] } }>>
}

const PAGE_SIZE = 500

/**
 * The union of the origins an account's clients registered, cached per account. Any change to a client of the
 * account drops the entry: the 'client' topic's key is `{account_id}/{client_id}`. Browsers send an Origin on
 * every cross-origin call, so without the cache each one would read all of the account's clients.
 */
export class CorsOrigins {
  readonly #cache: TtlCache<ReadonlySet<string>>

  constructor(
    private readonly clients: ClientOriginSource,
    invalidation: CacheInvalidation,
  ) {
    this.#cache = invalidation.cache('client', { keyOf: (changed) => changed.split('/', 1)[0] ?? changed })
  }

  allows(accountId: string, origin: string): Awaitable<boolean> {
    return andThen(this.#cache.get(accountId, () => this.#load(accountId)), (origins) => origins?.has(origin) ?? false)
  }

  async #load(accountId: string): Promise<ReadonlySet<string>> {
    const origins = new Set<string>()
    let after: string | undefined
    for (;;) {
      const page = await this.clients.list(accountId, PAGE_SIZE, after)
      for (const client of page) for (const origin of client.metadata.allowed_cors_origins) origins.add(origin)
      if (page.length < PAGE_SIZE) return origins
      after = page.at(-1)?.id
    }
  }
}

/**
 * CORS for exactly the routes `policies` names (paths relative to `app`'s prefix), and for no other: an
 * allowed origin gets `Access-Control-Allow-Origin` on every answer of those routes, errors included, so a
 * browser app can read an OAuth error; each named path also answers preflight `OPTIONS`. An unknown origin's
 * preflight is answered 204 without any allow header, which the browser treats as a refusal.
 */
export function installCors(app: App, origins: CorsOrigins, policies: Readonly<Record<string, CorsPolicy>>): void {
  const byRoute = new Map(Object.entries(policies).map(([path, policy]) => [`${app.prefix}${path}`, policy]))

  // A route-level hook on exactly the named routes: every other route pays nothing for CORS.
  app.addHook('onRoute', (route) => {
    const policy = byRoute.get(route.url)
    if (policy === undefined || route.method === 'OPTIONS') return
    route.onRequest = appendHook(route.onRequest, awaitableHook((request, reply) => allowOrigin(request, reply, policy, origins)))
  })

  for (const [path, policy] of Object.entries(policies)) {
    app.options(path, { schema: { hide: true } }, async (request, reply) => {
      if (await allowOrigin(request, reply, policy, origins)) {
        reply
          .header('access-control-allow-methods', PREFLIGHT_METHODS)
          .header('access-control-allow-headers', PREFLIGHT_HEADERS)
          .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS))
      }
      return reply.status(204).send()
    })
  }
}

/** Sets the allow-origin headers the policy grants this request; true if it granted any. */
function allowOrigin(request: FastifyRequest, reply: FastifyReply, policy: CorsPolicy, origins: CorsOrigins): Awaitable<boolean> {
  if (policy === 'any-origin') {
    // The same answer for every origin, so shared caches need no Vary.
    reply.header('access-control-allow-origin', '*')
    return true
  }
  // The answer depends on Origin, whatever it turns out to be (Fetch standard, CORS protocol and HTTP caches).
  reply.header('vary', 'Origin')
  const origin = request.headers.origin
  if (origin === undefined) return false
  return andThen(origins.allows(request.account.id, origin), (allowed) => {
    if (allowed) reply.header('access-control-allow-origin', origin)
    return allowed
  })
}
