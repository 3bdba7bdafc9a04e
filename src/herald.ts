import type { FastifyBaseLogger } from 'fastify'
import type { Agent } from 'undici'
import { AuthorizationProvisioning } from './authorization/provisioning.js'
import { ClientStore, type RegisteredClient } from './authorization/clients/client-store.js'
import { Clients } from './authorization/clients/clients.js'
import { ClientKeySets } from './authorization/clients/client-key-sets.js'
import { AssertionReplay } from './authorization/token/assertion-replay.js'
import { ClientAssertions } from './authorization/token/client-assertion.js'
import { ClientAuthentication } from './authorization/token/client-authentication.js'
import { Pruner } from './platform/maintenance/pruner.js'
import { PRUNE_GRACE_MS, TokenRevocations } from './authorization/revocation/revocation-store.js'
import { Scopes } from './authorization/scopes/scopes.js'
import { AccessTokenVerifier } from './platform/access-tokens/access-token-verifier.js'
import { Accounts } from './platform/accounts/accounts.js'
import { CacheInvalidation } from './platform/cache/invalidation.js'
import { ChangeFeed } from './platform/cache/change-feed.js'
import { Outbox } from './platform/events/outbox.js'
import { Notifications } from './platform/notifications/notifications.js'
import { type Clock, systemClock } from './platform/clock.js'
import type { Config } from './platform/config.js'
import { resolveSecretBox } from './platform/crypto/master-key.js'
import { CorsOrigins } from './platform/http/cors.js'
import { KeyStore } from './platform/keys/key-store.js'
import { ManagementAuth } from './platform/management-auth/management-auth.js'
import { createGuardedAgent } from './platform/outbound/guarded-agent.js'
import { SettingsStore } from './platform/settings/settings.js'
import { type Database, openDatabase } from './platform/storage/database.js'
import { migrateToLatest } from './platform/storage/migrate.js'
import { BASELINE } from './platform/storage/migrations/index.js'
import { openWebhooks, type Webhooks } from './webhooks/webhooks.js'

/**
 * How long a cache entry is served at most. Changes made through Herald reach every process within a second (see
 * ChangeFeed); this bounds only changes written into the database by hand. Documented in docs/architecture/caching.md.
 */
export const CACHE_TTL_MS = 5 * 60_000

export interface HeraldOptions {
  config: Config
  log: FastifyBaseLogger
  clock?: Clock
}

/** Every long-lived part of Herald, wired once; the HTTP server and the CLI commands both use it. */
export interface Herald {
  config: Config
  clock: Clock
  log: FastifyBaseLogger
  database: Database
  notifications: Notifications
  invalidation: CacheInvalidation
  /** Reads the cache change log every second: changes other processes made that no notification reported. */
  changeFeed: ChangeFeed
  accounts: Accounts
  settings: SettingsStore
  keys: KeyStore
  clients: ClientStore
  clientAdmin: Clients
  revocations: TokenRevocations
  /** Housekeeping on timers: each deletes rows no longer needed, in bounded batches. */
  pruners: { revocations: Pruner; assertionIds: Pruner; cacheChanges: Pruner } & Webhooks['pruners']
  accessTokens: AccessTokenVerifier<RegisteredClient>
  corsOrigins: CorsOrigins
  scopes: Scopes
  managementAuth: ManagementAuth
  /** The SSRF-guarded agent for every request Herald makes to a URL an account gave it. */
  outbound: Agent
  clientAuthentication: ClientAuthentication
  webhooks: Webhooks
  close(): Promise<void>
}

/** Opens the database, applies pending migrations and wires the services. */
export async function openHerald({ config, log, clock = systemClock }: HeraldOptions): Promise<Herald> {
  const box = resolveSecretBox(config, log)
  const database = openDatabase(config.database)
  /** What has started so far, to stop if a later step fails. */
  const started: Array<() => Promise<void>> = []
  try {
    const { adoptedPreBaseline } = await migrateToLatest(database)
    if (adoptedPreBaseline) log.info(`recorded the migrations of a development build as ${BASELINE}, whose schema they made`)
    const notifications = new Notifications(database, log)
    await notifications.start()
    started.push(() => notifications.close())
    const invalidation = new CacheInvalidation(notifications, clock, CACHE_TTL_MS, config.cacheSize)
    const changeFeed = new ChangeFeed(database.db, database.features, clock, log, invalidation)
    await changeFeed.start()
    started.push(() => changeFeed.stop())
    const outbox = new Outbox(notifications)
    const { db } = database
    const settings = new SettingsStore(db, clock, invalidation, outbox)
    const keys = new KeyStore(db, box, clock, invalidation, outbox, config.cacheSize)
    const clients = new ClientStore(db, clock, invalidation)
    const provisioning = new AuthorizationProvisioning(clients, clock)
    const accounts = new Accounts(db, clock, invalidation, settings, keys, provisioning, config.publicUrl)
    const revocations = new TokenRevocations(db, database.features, outbox)
    const accessTokens = new AccessTokenVerifier(keys, clients, revocations, clock, config.cacheSize)
    const managementAuth = new ManagementAuth(accessTokens)
    const corsOrigins = new CorsOrigins(clients, invalidation)
    const clientAdmin = new Clients(db, clients, clock, outbox, { allowHttp: config.allowHttpOutbound, allowedCidrs: config.webhookAllowedCidrs })
    const outbound = createGuardedAgent({ allowedCidrs: config.webhookAllowedCidrs })
    const keySets = new ClientKeySets(outbound, clock, log, { allowHttp: config.allowHttpOutbound })
    const assertionReplay = new AssertionReplay(db, database.features, clock)
    const clientAuthentication = new ClientAuthentication(clients, new ClientAssertions(keySets, assertionReplay, clock, log))
    const scopes = new Scopes(db, clients, clock, outbox)
    const webhooks = openWebhooks({ config, database, box, clock, log, notifications, invalidation, outbox, settings, outbound })
    const pruners = {
      revocations: new Pruner('expired token revocations', (limit) => revocations.pruneExpired(clock.now() - PRUNE_GRACE_MS, limit), log),
      assertionIds: new Pruner('used client assertion ids', (limit) => assertionReplay.pruneExpired(limit), log),
      cacheChanges: new Pruner('old cache changes', (limit) => changeFeed.prune(limit), log),
      ...webhooks.pruners,
    }
    for (const pruner of Object.values(pruners)) pruner.start()
    return {
      config,
      clock,
      log,
      database,
      notifications,
      invalidation,
      changeFeed,
      accounts,
      settings,
      keys,
      clients,
      clientAdmin,
      revocations,
      pruners,
      accessTokens,
      corsOrigins,
      scopes,
      managementAuth,
      outbound,
      clientAuthentication,
      webhooks,
      async close() {
        await webhooks.worker.stop()
        await Promise.all(Object.values(pruners).map((pruner) => pruner.stop()))
        await changeFeed.stop()
        await outbound.close()
        await notifications.close()
        await database.close()
      },
    }
  } catch (error) {
    for (const stop of started.reverse()) await stop()
    await database.close()
    throw error
  }
}
