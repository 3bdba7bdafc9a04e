import type { Kysely } from 'kysely'
import type { Clock } from '../../platform/clock.js'
import type { SecretBox } from '../../platform/crypto/secret-box.js'
import type { Outbox } from '../../platform/events/outbox.js'
import type { GuardedEventsSql } from '../../platform/events/sql/guarded-events.js'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import type { DB } from '../../platform/storage/schema.js'
import type { ClientStore } from '../clients/client-store.js'
import { AuthorizeFlow } from './authorize-flow.js'
import { BrowserSessions } from './browser-sessions.js'
import { Challenges } from './challenges.js'
import { Consents } from './consents.js'
import { FlowStore } from './flow-store.js'
import type { KeyStore } from '../../platform/keys/key-store.js'
import type { BackchannelLogoutEndpoints } from '../logout/backchannel.js'
import { Logouts } from '../logout/logouts.js'

/** OpenID Connect sign-in and logout: the flows, and the browser's and the login app's sides of them. */
export interface SignIn {
  flows: FlowStore
  sessions: BrowserSessions
  authorizeFlow: AuthorizeFlow
  challenges: Challenges
  logouts: Logouts
}

export interface SignInDeps {
  db: Kysely<DB>
  dialect: SqlDialect
  clients: ClientStore
  keys: KeyStore
  /** Makes the login, consent and logout verifiers again (Challenges, Logouts.answer). */
  box: SecretBox
  outbox: Outbox
  /** The login app's answers and their events, both or neither. */
  guardedEvents: GuardedEventsSql
  clock: Clock
  logoutEndpoints: BackchannelLogoutEndpoints
}

export function openSignIn({ db, dialect, clients, keys, box, outbox, guardedEvents, clock, logoutEndpoints }: SignInDeps): SignIn {
  const flows = new FlowStore(db)
  const consents = new Consents(db)
  const sessions = new BrowserSessions(db, dialect, flows, outbox, logoutEndpoints)
  return {
    flows,
    sessions,
    authorizeFlow: new AuthorizeFlow(db, flows, sessions, consents, clients, keys),
    challenges: new Challenges(flows, sessions, clients, consents, guardedEvents, box, clock),
    logouts: new Logouts(db, clients, sessions, keys, box, clock),
  }
}
