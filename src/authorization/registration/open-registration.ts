import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Clock } from '../../platform/clock.js'
import type { Outbox } from '../../platform/events/outbox.js'
import { Pruner } from '../../platform/maintenance/pruner.js'
import type { SettingsStore } from '../../platform/settings/settings.js'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import type { DB } from '../../platform/storage/schema.js'
import type { ClientStore } from '../clients/client-store.js'
import type { Clients } from '../clients/clients.js'
import { ClientUse } from './client-use.js'
import { InitialAccessTokens } from './initial-access-tokens.js'
import { RegistrationRateLimit } from './rate-limit.js'
import { Registration } from './registration.js'
import { RegistrationStore } from './registration-store.js'

export interface RegistrationDeps {
  db: Kysely<DB>
  dialect: SqlDialect
  clock: Clock
  log: FastifyBaseLogger
  outbox: Outbox
  settings: SettingsStore
  clients: ClientStore
  clientAdmin: Clients
}

export interface RegistrationParts {
  registration: Registration
  tokens: InitialAccessTokens
  /** Told by the token endpoint of every client it issues to. */
  clientUse: ClientUse
  pruners: { registrationTokens: Pruner; registeredClients: Pruner }
}

/** Dynamic client registration, wired: the endpoints' service, the initial access tokens, and their housekeeping. */
export function openRegistration({ db, dialect, clock, log, outbox, settings, clients, clientAdmin }: RegistrationDeps): RegistrationParts {
  const store = new RegistrationStore(db)
  const tokens = new InitialAccessTokens(db, dialect, clock)
  const clientUse = new ClientUse(db, clock, log, store, clients, clientAdmin)
  return {
    registration: new Registration(db, dialect, clock, outbox, settings, clientAdmin, clients, store, tokens, new RegistrationRateLimit()),
    tokens,
    clientUse,
    pruners: {
      registrationTokens: new Pruner('expired initial access tokens', (limit) => tokens.pruneExpired(limit), log),
      registeredClients: new Pruner('unused registered clients', (limit) => clientUse.pruneUnused(limit), log),
    },
  }
}
