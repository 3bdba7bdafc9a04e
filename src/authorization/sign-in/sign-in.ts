import type { Kysely } from 'kysely'
import type { Clock } from '../../platform/clock.js'
import type { Outbox } from '../../platform/events/outbox.js'
import type { DB } from '../../platform/storage/schema.js'
import type { ClientStore } from '../clients/client-store.js'
import { AuthorizeFlow } from './authorize-flow.js'
import { BrowserSessions } from './browser-sessions.js'
import { Challenges } from './challenges.js'
import { Consents } from './consents.js'
import { FlowStore } from './flow-store.js'

/** OpenID Connect sign-in: the flows, and the browser's and the login app's sides of them. */
export interface SignIn {
  flows: FlowStore
  authorizeFlow: AuthorizeFlow
  challenges: Challenges
}

export function openSignIn({ db, clients, outbox, clock }: { db: Kysely<DB>; clients: ClientStore; outbox: Outbox; clock: Clock }): SignIn {
  const flows = new FlowStore(db)
  const consents = new Consents(db)
  return {
    flows,
    authorizeFlow: new AuthorizeFlow(db, flows, new BrowserSessions(db), consents, clients),
    challenges: new Challenges(db, flows, clients, consents, outbox, clock),
  }
}
