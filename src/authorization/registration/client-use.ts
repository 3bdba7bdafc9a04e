import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Clock } from '../../platform/clock.js'
import type { DB } from '../../platform/storage/schema.js'
import { retryingDeadlocks, transaction } from '../../platform/storage/transaction.js'
import { ThrottledWarning } from '../../platform/throttled-warning.js'
import type { ClientStore, RegisteredClient } from '../clients/client-store.js'
import type { Clients } from '../clients/clients.js'
import type { RegistrationStore } from './registration-store.js'

const DAY_MS = 24 * 3600 * 1000

/**
 * When registered clients were last used, and the pruning of those unused for longer than their account allows.
 * The token endpoint serves clients from a cache and writes nothing per request: a use is written at most once a day
 * per client and process (and the statement itself skips a client already noted that day), after the answer, never
 * holding it up. So a last use is known to a day, which is all that pruning after days needs.
 */
export class ClientUse {
  /** Keyed by the cached client itself: an entry goes when the cache lets the client go. */
  readonly #noted = new WeakMap<RegisteredClient, number>()
  readonly #failed = new ThrottledWarning('recording the last use of a registered client failed')

  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
    private readonly store: RegistrationStore,
    private readonly clientStore: ClientStore,
    private readonly clients: Clients,
  ) {}

  /** The client got a token. */
  note(client: RegisteredClient): void {
    if (client.source !== 'registration') return
    const now = this.clock.now()
    const last = this.#noted.get(client)
    if (last !== undefined && now - last < DAY_MS) return
    this.#noted.set(client, now)
    this.store.noteUse(client.accountId, client.id, now).catch((error: unknown) => {
      this.#noted.delete(client)
      this.#failed.report(this.log, error)
    })
  }

  /**
   * Deletes at most `limit` registered clients unused for longer than their account's `registration_prune_after_days`,
   * each as the management API would (with its logout endpoint and its `oauth.client.deleted` event).
   */
  async pruneUnused(limit: number): Promise<number> {
    let deleted = 0
    for (const { accountId, clientId } of await this.store.unused(this.clock.now(), limit)) {
      await retryingDeadlocks(() =>
        transaction(this.db, async (tx) => {
          const client = await this.clientStore.read(tx.db, accountId, clientId, true)
          if (!client) return
          await this.clients.remove(tx, client)
          deleted += 1
        }),
      )
    }
    return deleted
  }
}
