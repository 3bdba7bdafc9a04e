import type { Clock } from '../../platform/clock.js'
import { newId } from '../../platform/ids.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import type { Tx } from '../../platform/storage/transaction.js'
import { insertDeliveries } from '../delivery/new-deliveries.js'
import { generateSecret } from '../delivery/signing.js'
import type { WakeSignal } from '../delivery/wake.js'
import type { Endpoints } from './endpoints.js'

/**
 * The webhook side of back-channel logout (OpenID Connect Back-Channel Logout 1.0). A client that registers a
 * `backchannel_logout_uri` owns one endpoint with that URL, kept in step with the client in the client's own
 * transaction. When a session ends, each such client that took part in it gets a delivery of the session's
 * `oauth.session.ended` event on its endpoint, which the sender turns into a logout token: leases, the account's
 * retry schedule, recorded attempts, holds and manual retries all work as for any webhook, so a client that was down
 * when its user logged out still learns of it.
 */
export class ClientLogoutEndpoints {
  constructor(
    private readonly endpoints: Endpoints,
    private readonly dialect: SqlDialect,
    private readonly wake: WakeSignal,
    private readonly clock: Clock,
  ) {}

  /** Creates, moves or deletes the client's logout endpoint so that it matches `uri` (null: the client has none). */
  async sync(tx: Tx, accountId: string, clientId: string, uri: string | null): Promise<void> {
    const row = await forAccount(tx.db, accountId).selectFrom('webhook_endpoints').selectAll().where('client_id', '=', clientId).executeTakeFirst()
    if (uri === null) {
      if (row) await this.endpoints.remove(tx, row)
    } else if (!row) {
      // The secret signs nothing (logout tokens are signed with the account's keys), but every endpoint has one.
      await this.endpoints.insert(tx, accountId, { url: uri, description: `Back-channel logout of client ${clientId}` }, generateSecret(), clientId)
    } else if (row.url !== uri) {
      await this.endpoints.moveTo(tx, row, uri)
    }
  }

  /** Queues a logout token for every client with a logout endpoint that took part in the ended sessions. */
  async notify(tx: Tx, accountId: string, ended: ReadonlyArray<{ sessionId: string; eventId: string }>): Promise<void> {
    if (ended.length === 0) return
    const targets = await forAccount(tx.db, accountId)
      .selectFrom('session_clients')
      .innerJoin('webhook_endpoints', (join) =>
        join.onRef('webhook_endpoints.account_id', '=', 'session_clients.account_id').onRef('webhook_endpoints.client_id', '=', 'session_clients.client_id'),
      )
      .select(['session_clients.session_id', 'webhook_endpoints.id as endpoint_id'])
      .where('session_clients.session_id', 'in', ended.map((session) => session.sessionId))
      .execute()
    if (targets.length === 0) return
    const now = this.clock.now()
    const eventOf = new Map(ended.map((session) => [session.sessionId, session.eventId]))
    const deliveries = targets.map((target) => ({
      id: newId('dlv', now),
      account_id: accountId,
      event_id: eventOf.get(target.session_id)!,
      event_type: 'oauth.session.ended',
      endpoint_id: target.endpoint_id,
      created_at: now,
    }))
    const { rows } = await insertDeliveries(this.dialect, deliveries).execute(tx.db)
    if (rows.some((row) => row.status === 'pending')) await this.wake.send(tx, 'deliveries')
  }
}
