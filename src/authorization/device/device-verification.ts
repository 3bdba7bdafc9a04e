import type { Kysely } from 'kysely'
import type { Clock } from '../../platform/clock.js'
import { randomToken } from '../../platform/crypto/random.js'
import type { Outbox } from '../../platform/events/outbox.js'
import { ProblemError, notFound } from '../../platform/http/problems.js'
import { newId } from '../../platform/ids.js'
import type { AccountSettings, SettingsStore } from '../../platform/settings/settings.js'
import type { DB } from '../../platform/storage/schema.js'
import { transaction } from '../../platform/storage/transaction.js'
import type { ClientStore } from '../clients/client-store.js'
import { type AuthorizationRequest, UntrustedRequestError } from '../sign-in/authorization-request.js'
import type { BrowserContext } from '../sign-in/authorize-flow.js'
import { flowCookie } from '../sign-in/cookies.js'
import { type FlowStore, secretDigest } from '../sign-in/flow-store.js'
import { type Navigation, withQuery } from '../sign-in/navigation.js'
import { type DeviceChallenge, type DeviceChallengeStore, WRONG_CODES_PER_CHALLENGE } from './device-challenge-store.js'
import type { DeviceAuthorization, DeviceStore } from './device-store.js'
import { normalizedUserCode, userCodeDigest } from './user-codes.js'

/**
 * RFC 8628 §5.1: at most this many wrong user codes from one address in a window, whatever challenges they come
 * through, and at most WRONG_CODES_PER_ACCOUNT from all of them. The address's limit stops one guesser long before
 * the account's, which would refuse every user's code while it holds; the account's bounds guessing from many
 * addresses (20^8 codes: about one success in 300 days of guessing at that limit with a thousand codes out, and a
 * guessed code only signs its device in to the guesser's own account).
 */
export const WRONG_CODES_PER_ADDRESS = 20
export const WRONG_CODES_PER_ACCOUNT = 600
export const WRONG_CODE_WINDOW_MS = 10 * 60_000

/** What the account's app reads about a device challenge. */
export interface DeviceRequestView {
  challenge: string
  /** Wrong user codes this challenge still takes before it is spent. */
  attempts_left: number
  expires_at: string
}

/**
 * The device verification (RFC 8628 §3.3), headless as Hydra's: the browser opens `{issuer}/oauth/device`, which binds
 * a new sign-in to it (its flow cookie) and sends it to the account's `device_verification_url` with a
 * `device_challenge`; the app asks the user for the code and accepts the challenge with it, which starts the
 * ordinary login and consent challenges of a flow marked `device`, or rejects it. The flow ends at the account's
 * `device_done_url`, never at a client's redirect URI.
 */
export class DeviceVerification {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly challenges: DeviceChallengeStore,
    private readonly devices: DeviceStore,
    private readonly flows: FlowStore,
    private readonly clients: ClientStore,
    private readonly settings: SettingsStore,
    private readonly outbox: Outbox,
    private readonly clock: Clock,
  ) {}

  /** The browser at `{issuer}/oauth/device[?user_code=…]`: on to the account's verification page. */
  async start(context: BrowserContext, userCode: string | undefined): Promise<Navigation> {
    const { account, settings, now } = context
    const pages = devicePages(settings)
    if (!pages) throw new UntrustedRequestError('server_error', 'The account has no device_verification_url or device_done_url')
    const id = newId('flow', now)
    const browser = randomToken()
    const challenge = randomToken()
    const ttl = settings.login_challenge_ttl
    await this.challenges.insert(this.db, account.id, { id, challenge_hash: secretDigest(challenge), browser: secretDigest(browser), address: context.address, expires_at: now + ttl * 1000 }, now)
    const typed = userCode === undefined ? undefined : normalizedUserCode(userCode)
    const query = { device_challenge: challenge, ...(typed !== undefined && { user_code: `${typed.slice(0, 4)}-${typed.slice(4)}` }) }
    // The cookie outlives the code's entry, the login and the consent, each of which may take the challenge's lifetime.
    return { kind: 'redirect', location: withQuery(pages.verification, query), cookies: [{ name: flowCookie(id), value: browser, maxAge: 3 * ttl }] }
  }

  async view(accountId: string, challenge: string): Promise<DeviceRequestView> {
    const waiting = await this.#waiting(accountId, challenge)
    return { challenge, attempts_left: WRONG_CODES_PER_CHALLENGE - waiting.failedAttempts, expires_at: new Date(waiting.expiresAt).toISOString() }
  }

  /**
   * The user typed `userCode`: if it names a device waiting for its user, the challenge starts the device's sign-in
   * flow in the browser that opened it, and the browser goes on to the login app. A wrong code counts against the
   * challenge and the account (400 invalid_user_code); a code is used once.
   */
  async accept(accountId: string, challenge: string, userCode: string): Promise<string> {
    const now = this.clock.now()
    const waiting = await this.#waiting(accountId, challenge)
    const device = await this.#deviceOf(waiting, userCode, now)
    const client = await this.clients.find(accountId, device.clientId)
    const settings = await this.#settings(accountId)
    const pages = devicePages(settings)
    if (!client || !pages || settings.login_url === null) throw new ProblemError('conflict', 'The account has no login_url, device_verification_url or device_done_url')
    const loginChallenge = randomToken()
    const request = deviceRequest(client.id, device, pages.done)
    await transaction(this.db, async (tx) => {
      if (!(await this.challenges.advance(tx.db, waiting, 'accepted', now))) throw answeredAlready()
      await this.flows.insert(
        tx.db,
        accountId,
        {
          id: waiting.id,
          client_id: client.id,
          stage: 'login',
          request: JSON.stringify(request),
          browser: waiting.browser,
          challenge: secretDigest(loginChallenge),
          handle: null,
          subject: null,
          session_id: null,
          login: null,
          expires_at: now + settings.login_challenge_ttl * 1000,
        },
        now,
      )
      if (!(await this.devices.advance(tx, device, 'verified', { flow_id: waiting.id }, now))) throw invalidUserCode('The user code was used already')
      await this.outbox.record(tx, accountId, 'oauth.device.accepted', { client_id: client.id, scope: device.scope }, now)
    })
    return withQuery(settings.login_url, { login_challenge: loginChallenge })
  }

  /**
   * The user refused: with the user code they were shown, that device is refused too (its poll answers
   * access_denied). The browser goes to the account's done page with the error.
   */
  async reject(accountId: string, challenge: string, userCode: string | undefined): Promise<string> {
    const now = this.clock.now()
    const waiting = await this.#waiting(accountId, challenge)
    const device = userCode === undefined ? undefined : await this.#deviceOf(waiting, userCode, now)
    const pages = devicePages(await this.#settings(accountId))
    if (!pages) throw new ProblemError('conflict', 'The account has no device_verification_url or device_done_url')
    await transaction(this.db, async (tx) => {
      if (!(await this.challenges.advance(tx.db, waiting, 'rejected', now))) throw answeredAlready()
      if (device && !(await this.devices.advance(tx, device, 'denied', {}, now))) throw invalidUserCode('The user code was used already')
      await this.outbox.record(tx, accountId, 'oauth.device.rejected', { client_id: device?.clientId ?? null }, now)
    })
    return withQuery(pages.done, { error: 'access_denied', error_description: 'The request was refused' })
  }

  /** The challenge, if it waits for an answer: 404 when there is none or it lapsed; 409 once answered or spent. */
  async #waiting(accountId: string, challenge: string): Promise<DeviceChallenge> {
    const found = await this.challenges.byChallenge(accountId, challenge)
    if (!found || found.expiresAt <= this.clock.now()) throw notFound('The device request')
    if (found.stage !== 'waiting') throw answeredAlready()
    return found
  }

  /** The device waiting for this user code; a wrong one counts against the challenge, within the account's limit. */
  async #deviceOf(challenge: DeviceChallenge, userCode: string, now: number): Promise<DeviceAuthorization> {
    const wrong = await this.challenges.wrongCodesSince(challenge.accountId, challenge.address, now - WRONG_CODE_WINDOW_MS)
    if (wrong.address >= WRONG_CODES_PER_ADDRESS) throw new ProblemError('too_many_requests', 'Too many wrong user codes from this address; try again in a few minutes')
    if (wrong.account >= WRONG_CODES_PER_ACCOUNT) throw new ProblemError('too_many_requests', 'Too many wrong user codes in this account; try again in a few minutes')
    const digest = userCodeDigest(userCode)
    const device = digest === undefined ? undefined : await this.devices.pendingByUserCode(challenge.accountId, digest, now)
    if (device) return device
    const left = await this.challenges.recordWrongCode(challenge, now)
    throw invalidUserCode(left > 0 ? `The user code is wrong, expired or used; ${left} more attempts` : 'The user code is wrong; this verification is spent, start again')
  }

  async #settings(accountId: string): Promise<AccountSettings> {
    const settings = await this.settings.get(accountId)
    if (!settings) throw notFound('The account')
    return settings
  }
}

function devicePages(settings: AccountSettings): { verification: string; done: string } | undefined {
  const { device_verification_url: verification, device_done_url: done } = settings
  return verification === null || done === null ? undefined : { verification, done }
}

/**
 * The device's request as a sign-in flow holds it: its scopes, and the done page as where the flow's answer goes.
 * RFC 8628 has no redirect URI, state, nonce or PKCE.
 */
function deviceRequest(clientId: string, device: DeviceAuthorization, donePage: string): AuthorizationRequest {
  return {
    flow: 'device',
    client_id: clientId,
    redirect_uri: donePage,
    response_mode: 'query',
    scope: device.scope,
    state: null,
    nonce: null,
    code_challenge: null,
    prompt: [],
    max_age: null,
    login_hint: null,
    acr_values: [],
    ui_locales: [],
    resource: [],
    id_token_hint: null,
  }
}

function invalidUserCode(detail: string): ProblemError {
  return new ProblemError('invalid_user_code', detail)
}

function answeredAlready(): ProblemError {
  return new ProblemError('conflict', 'The device request was answered already, or spent by wrong user codes')
}
