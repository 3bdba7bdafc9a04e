import type { FastifyBaseLogger } from 'fastify'
import { AuthorizationProvisioning } from './authorization/provisioning.js'
import { ClientStore } from './authorization/clients/client-store.js'
import { Clients } from './authorization/clients/clients.js'
import { Scopes } from './authorization/scopes/scopes.js'
import { Accounts } from './platform/accounts/accounts.js'
import { CacheInvalidation } from './platform/cache/invalidation.js'
import { type Clock, systemClock } from './platform/clock.js'
import type { Config } from './platform/config.js'
import { resolveSecretBox } from './platform/crypto/master-key.js'
import { KeyStore } from './platform/keys/key-store.js'
import { ManagementAuth } from './platform/management-auth/management-auth.js'
import { SettingsStore } from './platform/settings/settings.js'
import { type Database, openDatabase } from './platform/storage/database.js'
import { migrateToLatest } from './platform/storage/migrate.js'

/**
 * How stale an in-process cache may be when a change was made by a process it could not hear from (SQLite
 * with an operator CLI, or PostgreSQL while the listener reconnects). Documented in the README.
 */
export const CACHE_TTL_MS = 5000

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
  invalidation: CacheInvalidation
  accounts: Accounts
  settings: SettingsStore
  keys: KeyStore
  clients: ClientStore
  clientAdmin: Clients
  scopes: Scopes
  managementAuth: ManagementAuth
  close(): Promise<void>
}

/** Opens the database, applies pending migrations and wires the services. */
export async function openHerald({ config, log, clock = systemClock }: HeraldOptions): Promise<Herald> {
  const box = resolveSecretBox(config, log)
  const database = openDatabase(config.database)
  try {
    await migrateToLatest(database.db)
    const invalidation = new CacheInvalidation(database, log)
    await invalidation.start()
    const { db } = database
    const settings = new SettingsStore(db, clock, invalidation, CACHE_TTL_MS)
    const keys = new KeyStore(db, box, clock, invalidation, CACHE_TTL_MS)
    const clients = new ClientStore(db, clock, invalidation, CACHE_TTL_MS)
    const provisioning = new AuthorizationProvisioning(clients, clock)
    const accounts = new Accounts(db, clock, invalidation, settings, keys, provisioning, config.publicUrl, CACHE_TTL_MS)
    const managementAuth = new ManagementAuth(db, keys, clients, clock)
    const clientAdmin = new Clients(db, clients, clock)
    const scopes = new Scopes(db, clients, clock)
    return {
      config,
      clock,
      log,
      database,
      invalidation,
      accounts,
      settings,
      keys,
      clients,
      clientAdmin,
      scopes,
      managementAuth,
      async close() {
        await invalidation.close()
        await database.close()
      },
    }
  } catch (error) {
    await database.close()
    throw error
  }
}
