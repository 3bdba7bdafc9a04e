import type { KeyStore } from '../../platform/keys/key-store.js'
import { signJwt } from '../../platform/keys/material.js'
import type { Tx } from '../../platform/storage/transaction.js'
import type { ClientStore } from '../clients/client-store.js'

/** A session that just ended, and the `oauth.session.ended` event that announced it. */
export interface EndedSession {
  sessionId: string
  eventId: string
}

/**
 * What the authorization area asks of the webhook area for back-channel logout (its ClientLogoutEndpoints): keep each
 * client's logout endpoint in step with its `backchannel_logout_uri`, and queue a logout for the clients that took
 * part in sessions that ended, both in the caller's transaction.
 */
export interface BackchannelLogoutEndpoints {
  sync(tx: Tx, accountId: string, clientId: string, uri: string | null): Promise<void>
  notify(tx: Tx, accountId: string, ended: readonly EndedSession[]): Promise<void>
}

/** The part of a delivery of `oauth.session.ended` that a logout token is made from. */
export interface LogoutDelivery {
  id: string
  accountId: string
  attemptNumber: number
  /** The event's data: `{ session_id, subject, reason }`. */
  eventData: string
}

/** Back-Channel Logout 1.0 §2.4: the member of `events` that makes a JWT a logout token. */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout'

/**
 * A logout token is short-lived, since a client may act on one it has not seen before; each attempt gets its own,
 * signed as it is sent, so a retry hours later still carries a fresh one.
 */
const LOGOUT_TOKEN_TTL_SECONDS = 120

/**
 * Signs logout tokens (Back-Channel Logout 1.0 §2.4) with the account's key for the client's ID token algorithm, as
 * the client verifies its ID tokens. Both `sub` and `sid` are always present, so `backchannel_logout_session_required`
 * is always met. `jti` names the delivery and attempt: unique per token, and traceable in the delivery's attempts.
 */
export class LogoutTokens {
  constructor(
    private readonly keys: KeyStore,
    private readonly clients: ClientStore,
    private readonly issuerOf: (accountId: string) => string,
  ) {}

  async logoutToken(delivery: LogoutDelivery, clientId: string, nowMs: number): Promise<string> {
    const client = await this.clients.find(delivery.accountId, clientId)
    if (!client) throw new Error(`client ${clientId} no longer exists`)
    const signer = await (await this.keys.keysOf(delivery.accountId))?.signer(client.metadata.id_token_signed_response_alg, nowMs)
    if (!signer) throw new Error(`the account has no ${client.metadata.id_token_signed_response_alg} key`)
    const ended = JSON.parse(delivery.eventData) as { session_id?: unknown; subject?: unknown }
    // A token naming neither would log nobody out, or everybody: refused, it is recorded as signing_failed.
    if (typeof ended.session_id !== 'string' || typeof ended.subject !== 'string') throw new Error(`delivery ${delivery.id} is not of a session that ended`)
    const iat = Math.floor(nowMs / 1000)
    const claims = {
      iss: this.issuerOf(delivery.accountId),
      aud: clientId,
      iat,
      exp: iat + LOGOUT_TOKEN_TTL_SECONDS,
      jti: `${delivery.id}.${delivery.attemptNumber}`,
      sub: ended.subject,
      sid: ended.session_id,
      events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
    }
    return signJwt(signer, 'logout+jwt', JSON.stringify(claims))
  }
}
