import type { Kysely } from 'kysely'
import { OAuthError } from '../../platform/http/oauth-errors.js'
import type { DB } from '../../platform/storage/schema.js'
import { transaction } from '../../platform/storage/transaction.js'
import { isUserGrant } from '../grants/grant.js'
import type { RefreshTokens } from '../grants/refresh-tokens.js'
import type { FlowStore } from '../sign-in/flow-store.js'
import type { GrantContext, TokenResponse } from '../token/grants.js'
import { refreshLifetimes, refreshTokenAllowed } from '../token/refresh-policy.js'
import { stillAllowed } from '../token/scope-policy.js'
import type { UserTokens } from '../token/user-tokens.js'
import type { DeviceAuthorization, DeviceStore } from './device-store.js'
import { type PollAnswer, type PollTimes, pollAnswer } from './poll-policy.js'

/** RFC 8628 §3.4 */
export const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code'

const UNKNOWN_CODE = 'The device code is unknown, or was issued to another client'

/** RFC 8628 §3.5: the answers to a poll that gets no tokens. */
const REFUSALS: Record<Exclude<PollAnswer, 'redeem' | 'slow_down'>, OAuthError> = {
  authorization_pending: new OAuthError('authorization_pending', 'The user has not approved the request yet'),
  access_denied: new OAuthError('access_denied', 'The user or the account refused the request'),
  expired_token: new OAuthError('expired_token', 'The device code has expired; start again'),
  used: new OAuthError('invalid_grant', 'The device code was used already'),
}

/**
 * RFC 8628 §3.4-3.5: the device polls with its device code until its user has approved or refused. A poll reads
 * at most the authorization with its sign-in flow (nothing while it waits: see DeviceStore); only a poll within the
 * interval writes (the interval grows by 5 s), and the redemption, which spends the device code and the flow
 * together, once.
 */
export class DeviceCodeGrant {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly devices: DeviceStore,
    private readonly flows: FlowStore,
    private readonly userTokens: UserTokens,
    private readonly refreshTokens: RefreshTokens,
    private readonly pollTimes: PollTimes,
  ) {}

  readonly issue = async (context: GrantContext): Promise<TokenResponse> => {
    const { account, client, body, nowMs } = context
    if (typeof body.device_code !== 'string' || body.device_code === '') throw new OAuthError('invalid_request', 'device_code is required')
    const found = await this.devices.forPoll(account.id, body.device_code)
    if (!found || found.device.clientId !== client.id) throw new OAuthError('invalid_grant', UNKNOWN_CODE)
    const { device, flow } = found
    const lastPolledAt = this.pollTimes.polled(device.id, nowMs)
    const answer = pollAnswer({ deviceStage: device.stage, flowStage: flow?.stage, expiresAt: device.expiresAt, interval: device.interval, lastPolledAt }, nowMs)
    if (answer === 'slow_down') {
      await this.devices.slowDown(device, nowMs)
      throw new OAuthError('slow_down', 'Polling too fast: wait 5 seconds longer between polls from now on')
    }
    if (answer !== 'redeem') throw REFUSALS[answer]
    if (!isUserGrant(flow)) throw new OAuthError('invalid_grant', UNKNOWN_CODE)
    this.pollTimes.forget(device.id)
    return this.#redeem(context, device, flow)
  }

  /** Spends the device code and the flow's approval together, and issues the user's tokens as the code grant does. */
  async #redeem(context: GrantContext, device: DeviceAuthorization, flow: NonNullable<Parameters<UserTokens['issue']>[1]>): Promise<TokenResponse> {
    const { account, client, settings, nowMs } = context
    const scopes = stillAllowed(client, flow.consent.grant_scope)
    const refresh = refreshTokenAllowed(client, scopes) ? refreshLifetimes(settings, client, nowMs) : undefined
    const idSigner = await this.userTokens.idTokenSigner(context, scopes)
    return transaction(this.db, async (tx) => {
      const refreshToken = refresh && (await this.refreshTokens.issue(tx.db, account.id, { grantId: flow.id, clientId: client.id, scope: scopes, ...refresh }, nowMs))
      const issued = this.userTokens.issue(context, flow, scopes, { nonce: false, idSigner, ...(refreshToken && { refreshToken }) })
      // As for a code: the grant lives as long as the last token it may issue.
      const expiresAt = Math.max(issued.expiresAt, refresh ? refresh.absoluteExpiresAt + settings.access_token_ttl * 1000 : 0)
      const redeemed = await this.flows.advance(tx.db, flow, 'redeemed', { access_token_jti: issued.jti, access_token_expires_at: issued.expiresAt, expires_at: expiresAt }, nowMs)
      // Another poll redeemed it first (its tokens stand; this one's roll back), or the flow was closed meanwhile.
      if (!redeemed || !(await this.devices.advance(tx, device, 'redeemed', {}, nowMs))) throw REFUSALS.used
      return issued.response
    })
  }
}
