import type { FastifyBaseLogger } from 'fastify'
import type { Agent } from 'undici'
import { AuthorizationProvisioning } from './authorization/provisioning.js'
import { FlowStore } from './authorization/sign-in/flow-store.js'
import { ClientStore, type RegisteredClient } from './authorization/clients/client-store.js'
import { Clients } from './authorization/clients/clients.js'
import { ClientKeySets } from './authorization/clients/client-key-sets.js'
import { AssertionReplay } from './authorization/token/assertion-replay.js'
import { ClientAssertions } from './authorization/token/client-assertion.js'
import { ClientAuthentication } from './authorization/token/client-authentication.js'
import { ClientDocuments } from './authorization/client-documents/client-documents.js'
import { ClientLookup } from './authorization/client-documents/client-lookup.js'
import { Pruner } from './platform/maintenance/pruner.js'
import { type RegistrationParts, openRegistration } from './authorization/registration/open-registration.js'
import { PRUNE_GRACE_MS, TokenRevocations } from './authorization/revocation/revocation-store.js'
import { Scopes } from './authorization/scopes/scopes.js'
import { AccessTokenVerifier } from './platform/access-tokens/access-token-verifier.js'
import { Accounts } from './platform/accounts/accounts.js'
import { CacheInvalidation } from './platform/cache/invalidation.js'
import { ChangeFeed } from './platform/cache/change-feed.js'
import { Outbox } from './platform/events/outbox.js'
import { Notifications } from './platform/notifications/notifications.js'
import { type AlarmClock, systemClock } from './platform/clock.js'
import type { Config } from './platform/config.js'
import type { SecretBox } from './platform/crypto/secret-box.js'
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
import { type SignIn, openSignIn } from './authorization/sign-in/sign-in.js'
import { SignInJanitor } from './authorization/sign-in/janitor.js'
import { AuthorizationCodeGrant } from './authorization/token/authorization-code-grant.js'
import { RefreshTokenGrant } from './authorization/token/refresh-token-grant.js'
import { UserTokens } from './authorization/token/user-tokens.js'
import { GrantRevocation } from './authorization/grants/grant-revocation.js'
import { UserGrants } from './authorization/grants/grant.js'
import { guardedEventsFor } from './platform/events/sql/index.js'
import { rotationSqlFor } from './authorization/grants/sql/index.js'
import { RefreshTokens } from './authorization/grants/refresh-tokens.js'
import { UserSessions } from './authorization/sessions/user-sessions.js'
import { LogoutTokens } from './authorization/logout/backchannel.js'
import { ConsoleLinks } from './authorization/console-links/console-links.js'
import { publicUrlForCommands } from './platform/server-record.js'
import { type Grants, clientCredentialsGrant } from './authorization/token/grants.js'
import { type Device, openDevice } from './authorization/device/device.js'
import { DEVICE_CODE_GRANT_TYPE } from './authorization/device/device-code-grant.js'
import { TokenExchangeGrant } from './authorization/token/token-exchange-grant.js'
import { ExchangeTokens } from './authorization/token/exchange-tokens.js'
import { BatchedOutbox } from './platform/events/batched-outbox.js'

/**
 * How long a cache entry is served at most. Changes made through Herald reach every process within a second (see
 * ChangeFeed); this bounds only changes written into the database by hand. Documented in docs/architecture/caching.md.
 */
export const CACHE_TTL_MS = 5 * 60_000
/** An account with more unexpired revocations than this has them looked up in the database (TokenRevocations). */
export const MAX_REVOCATIONS_KEPT_PER_ACCOUNT = 10_000
/** Revoked ids kept in memory over every account, per entry of HERALD_CACHE_SIZE (100,000 by default, about 10 MB). */
const REVOCATIONS_KEPT_PER_CACHE_ENTRY = 10

export interface HeraldOptions {
  config: Config
  log: FastifyBaseLogger
  clock?: AlarmClock
  /** The CLI's: print URLs under the public URL the server on this database recorded, unless PUBLIC_URL is set here. */
  followServer?: boolean
}

/**
 * What the operator commands (`herald accounts …`, `herald keys rotate`) work on: the accounts, their settings, keys
 * and clients, on a migrated database. Nothing runs in the background: a write records its cache changes in its own
 * transaction (the change log and, on PostgreSQL, a NOTIFY), which needs no listener.
 */
export interface HeraldCore {
  config: Config
  clock: AlarmClock
  log: FastifyBaseLogger
  database: Database
  /** Seals private keys and webhook secrets at rest. */
  box: SecretBox
  notifications: Notifications
  invalidation: CacheInvalidation
  outbox: Outbox
  accounts: Accounts
  settings: SettingsStore
  keys: KeyStore
  clients: ClientStore
  /** Single-use sign-in links to the console. */
  consoleLinks: ConsoleLinks
  close(): Promise<void>
}

/** Every long-lived part of a server process (`herald serve`, `herald worker`), wired once. */
export interface Herald extends HeraldCore {
  /** Reads the cache change log every second: changes other processes made that no notification reported. */
  changeFeed: ChangeFeed
  clientAdmin: Clients
  /** Dynamic client registration (RFC 7591, RFC 7592) and its initial access tokens. */
  registration: RegistrationParts
  revocations: TokenRevocations
  /** Housekeeping on timers: each deletes rows no longer needed, in bounded batches. */
  pruners: { revocations: Pruner; assertionIds: Pruner; cacheChanges: Pruner; flows: Pruner; deviceAuthorizations: Pruner; logoutRequests: Pruner; sessions: Pruner; consents: Pruner; consoleLinks: Pruner } & RegistrationParts['pruners'] & Webhooks['pruners']
  accessTokens: AccessTokenVerifier<RegisteredClient>
  corsOrigins: CorsOrigins
  scopes: Scopes
  managementAuth: ManagementAuth
  /** The SSRF-guarded agent for every request Herald makes to a URL an account gave it. */
  outbound: Agent
  /** The client a request's client_id names, a metadata document's included (authorize, PAR, token endpoint). */
  clientLookup: ClientLookup
  clientAuthentication: ClientAuthentication
  /** The token endpoint's grant handlers, by grant_type. */
  grants: Grants
  grantRevocation: GrantRevocation
  userGrants: UserGrants
  signIn: SignIn
  /** The device authorization grant (RFC 8628). */
  device: Device
  userSessions: UserSessions
  webhooks: Webhooks
  /**
   * Starts the notification listener, the change feed and the pruners. The delivery worker is started apart
   * (`webhooks.worker.start()`), once the process serves.
   */
  startBackgroundWork(): Promise<void>
}

/** Opens the database, applies pending migrations and wires what account administration needs; starts nothing. */
export async function openHeraldCore({ config: configured, log, clock = systemClock, followServer = false }: HeraldOptions): Promise<HeraldCore> {
  const box = resolveSecretBox(configured, log)
  const database = openDatabase(configured.database)
  let config = configured
  try {
    const { adoptedPreBaseline } = await migrateToLatest(database)
    if (adoptedPreBaseline) log.info(`recorded the migrations of a development build as ${BASELINE}, whose schema they made`)
    if (followServer) config = { ...configured, publicUrl: await publicUrlForCommands(database.db, configured, (line) => log.warn(line)) }
  } catch (error) {
    await database.close()
    throw error
  }
  const { db } = database
  const notifications = new Notifications(database, log)
  const invalidation = new CacheInvalidation(notifications, clock, CACHE_TTL_MS, config.cacheSize)
  const outbox = new Outbox(notifications)
  const settings = new SettingsStore(db, clock, invalidation, outbox)
  const keys = new KeyStore(db, box, clock, invalidation, outbox, config.cacheSize)
  const clients = new ClientStore(db, database.dialect, clock, invalidation)
  const accounts = new Accounts(db, clock, invalidation, settings, keys, new AuthorizationProvisioning(clients, new FlowStore(db), clock), config.publicUrl)
  return {
    config,
    clock,
    log,
    database,
    box,
    notifications,
    invalidation,
    outbox,
    accounts,
    settings,
    keys,
    clients,
    consoleLinks: new ConsoleLinks(db, database.dialect, clients, settings, keys, clock, config.publicUrl),
    async close() {
      await notifications.close()
      await database.close()
    },
  }
}

/** The core and everything the API and the delivery workers add to it; `startBackgroundWork` sets it running. */
export async function openHerald(options: HeraldOptions): Promise<Herald> {
  const core = await openHeraldCore(options)
  const { config, clock, log, database, box, notifications, invalidation, outbox, settings, clients, keys, accounts } = core
  const { db } = database
  const changeFeed = new ChangeFeed(db, database.dialect, clock, log, invalidation)
  const revocations = new TokenRevocations(db, database.dialect, outbox, invalidation, clock, {
    ttlMs: CACHE_TTL_MS,
    maxPerAccount: MAX_REVOCATIONS_KEPT_PER_ACCOUNT,
    maxIds: config.cacheSize * REVOCATIONS_KEPT_PER_CACHE_ENTRY,
  })
  const accessTokens = new AccessTokenVerifier(keys, clients, revocations, clock, config.cacheSize)
  const outbound = createGuardedAgent({ allowedCidrs: config.webhookAllowedCidrs })
  const keySets = new ClientKeySets(outbound, clock, log, { allowHttp: config.allowHttpOutbound })
  const clientDocuments = new ClientDocuments(db, clients, outbound, clock, { allowHttp: config.allowHttpOutbound, maxEntries: config.cacheSize })
  const clientLookup = new ClientLookup(clients, clientDocuments, settings)
  const assertionReplay = new AssertionReplay(db, database.dialect, clock)
  const logoutTokens = new LogoutTokens(keys, clients, (accountId) => accounts.issuerOf(accountId))
  const webhooks = openWebhooks({ config, database, box, clock, log, notifications, invalidation, outbox, settings, outbound, logoutTokens })
  const logoutEndpoints = webhooks.clientLogoutEndpoints
  const signIn = openSignIn({ db, dialect: database.dialect, clients, keys, box, outbox, guardedEvents: guardedEventsFor(database.dialect, db, outbox, notifications), clock, logoutEndpoints })
  const janitor = new SignInJanitor(db, database.dialect)
  const refreshTokens = new RefreshTokens(db, box, rotationSqlFor(database.dialect, db))
  const grantRevocation = new GrantRevocation(db, refreshTokens, revocations, outbox)
  const userTokens = new UserTokens(keys)
  const exchangeEvents = new BatchedOutbox(db, database.dialect, outbox, clock, log, webhooks.isSubscribed)
  const device = openDevice({ db, flows: signIn.flows, clients, settings, userTokens, refreshTokens, outbox, invalidation, clock, pollTimesCapacity: config.cacheSize })
  const grants: Grants = {
    client_credentials: clientCredentialsGrant,
    authorization_code: new AuthorizationCodeGrant(db, signIn.flows, userTokens, refreshTokens, grantRevocation).issue,
    refresh_token: new RefreshTokenGrant(db, refreshTokens, userTokens, grantRevocation).issue,
    [DEVICE_CODE_GRANT_TYPE]: device.grant.issue,
    'urn:ietf:params:oauth:grant-type:token-exchange': new TokenExchangeGrant(new ExchangeTokens(accessTokens, keys), exchangeEvents).issue,
  }
  const clientAdmin = new Clients(db, clients, clock, outbox, { allowHttp: config.allowHttpOutbound, allowedCidrs: config.webhookAllowedCidrs }, logoutEndpoints)
  const registration = openRegistration({ db, dialect: database.dialect, clock, log, outbox, settings, clients, clientAdmin })
  const pruners = {
    revocations: new Pruner('expired token revocations', (limit) => revocations.pruneExpired(clock.now() - PRUNE_GRACE_MS, limit), log),
    assertionIds: new Pruner('used client assertion ids', (limit) => assertionReplay.pruneExpired(limit), log),
    cacheChanges: new Pruner('old cache changes', (limit) => changeFeed.prune(limit), log),
    flows: new Pruner('lapsed authorization flows', (limit) => janitor.pruneFlows(clock.now(), limit), log),
    deviceAuthorizations: new Pruner('lapsed device authorizations', (limit) => janitor.pruneDeviceAuthorizations(clock.now(), limit), log),
    logoutRequests: new Pruner('lapsed logout requests', (limit) => janitor.pruneLogoutRequests(clock.now(), limit), log),
    sessions: new Pruner('expired browser sessions', (limit) => janitor.pruneSessions(clock.now(), limit), log),
    consents: new Pruner('expired consents', (limit) => janitor.pruneConsents(clock.now(), limit), log),
    consoleLinks: new Pruner('expired console sign-in links', (limit) => core.consoleLinks.pruneExpired(limit), log),
    ...registration.pruners,
    ...webhooks.pruners,
  }
  return {
    ...core,
    changeFeed,
    clientAdmin,
    registration,
    revocations,
    pruners,
    accessTokens,
    corsOrigins: new CorsOrigins(clients, invalidation),
    scopes: new Scopes(db, clients, clock, outbox),
    managementAuth: new ManagementAuth(accessTokens),
    outbound,
    clientLookup,
    clientAuthentication: new ClientAuthentication(clientLookup, new ClientAssertions(keySets, assertionReplay, clock, log)),
    grants,
    grantRevocation,
    userGrants: new UserGrants(signIn.flows),
    signIn,
    device,
    userSessions: new UserSessions(db, signIn.sessions, signIn.flows, grantRevocation, outbox, clock),
    webhooks,
    async startBackgroundWork() {
      await notifications.start()
      await changeFeed.start()
      for (const pruner of Object.values(pruners)) pruner.start()
    },
    async close() {
      await webhooks.worker.stop()
      await Promise.all(Object.values(pruners).map((pruner) => pruner.stop()))
      await changeFeed.stop()
      await outbound.close()
      await exchangeEvents.close()
      await core.close()
    },
  }
}
