import type { Kysely } from 'kysely'
import type { Clock } from '../../platform/clock.js'
import { randomToken } from '../../platform/crypto/random.js'
import type { Outbox } from '../../platform/events/outbox.js'
import { OAuthError } from '../../platform/http/oauth-errors.js'
import { type FieldError, ProblemError } from '../../platform/http/problems.js'
import { looksLikeId } from '../../platform/ids.js'
import type { AccountSettings, SettingsStore } from '../../platform/settings/settings.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import type { DB } from '../../platform/storage/schema.js'
import { retryingDeadlocks, type Tx, transaction } from '../../platform/storage/transaction.js'
import type { ClientMetadata } from '../clients/client-metadata.js'
import type { ClientStore, RegisteredClient } from '../clients/client-store.js'
import { type ClientView, type ClientWithSecret, type Clients, toView, withoutSecret } from '../clients/clients.js'
import { clientSecretMatches, hashClientSecret } from '../clients/secrets.js'
import type { InitialAccessTokens, SpentToken } from './initial-access-tokens.js'
import type { RegistrationRateLimit } from './rate-limit.js'
import { type RegistrationCeiling, narrowedCeiling, registrationCeiling, registrationMetadata, registrationPolicyProblems } from './registration-policy.js'
import type { ClientRegistration, RegistrationStore } from './registration-store.js'

/** RFC 7591 §3.2.1 / RFC 7592 §3: the client, and where and how it manages its registration. */
export type RegistrationResponse = (ClientView | ClientWithSecret) & { registration_client_uri: string; registration_access_token?: string }

/** RFC 7592 §2.2's request: the client's id, perhaps its current secret, and its metadata. */
export interface RegistrationUpdate {
  client_id: string
  client_secret?: string
  metadata: Partial<ClientMetadata>
}

/** Who asks: the account's issuer, the bearer token of the request, if any, and the address it came from. */
export interface Caller {
  accountId: string
  issuer: string
  bearer: string | undefined
  address: string
}

/**
 * Dynamic client registration (RFC 7591) and its management (RFC 7592). Each request is a pipeline: check the account
 * allows it and the caller's token, build the metadata under the policy's ceiling, validate it as the management API
 * does (Clients), then write the client, its registration and its event in one transaction.
 */
export class Registration {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: SqlDialect,
    private readonly clock: Clock,
    private readonly outbox: Outbox,
    private readonly settings: SettingsStore,
    private readonly clients: Clients,
    private readonly clientStore: ClientStore,
    private readonly store: RegistrationStore,
    private readonly tokens: InitialAccessTokens,
    private readonly rateLimit: RegistrationRateLimit,
  ) {}

  /** `input` answers the request's metadata, or throws why it can't: asked once the caller is let in. */
  async register(caller: Caller, input: () => Partial<ClientMetadata>): Promise<RegistrationResponse> {
    const settings = await this.#settingsOf(caller.accountId)
    const mode = settings.registration
    if (mode === 'disabled') throw new ProblemError('not_found', 'Dynamic client registration is not enabled for this account')
    const token = await this.#initialToken(caller, settings)
    const ceiling = registrationCeiling(settings, mode, token)
    const metadata = withinPolicy(registrationMetadata(input(), ceiling), ceiling)
    const unsafeUrls = await this.clients.outboundUrlProblems(metadata)
    return asRegistrationError(
      transaction(this.db, async (tx) => {
        await this.#withinClientCap(tx, caller.accountId, settings.registration_max_clients)
        const validated = await this.clients.validated(tx, caller.accountId, metadata, unsafeUrls)
        const spent = await this.#spendToken(tx, caller)
        const client = await this.clients.insert(tx, caller.accountId, validated, 'registration')
        const accessToken = randomToken()
        const now = this.clock.now()
        const row = { client_id: client.client_id, access_token_hash: hashClientSecret(accessToken), initial_token_id: spent?.id ?? null, last_used_at: now, created_at: now }
        await this.store.insert(tx, caller.accountId, row, ceiling)
        await this.outbox.record(tx, caller.accountId, 'oauth.client.registered', { ...withoutSecret(client), initial_access_token_id: row.initial_token_id }, now)
        return { ...client, registration_client_uri: clientUri(caller.issuer, client.client_id), registration_access_token: accessToken }
      }),
    )
  }

  /** The account may hold another registered client. The lock is held until commit (PostgreSQL), so concurrent registrations count each other. */
  async #withinClientCap(tx: Tx, accountId: string, maxClients: number): Promise<void> {
    await this.dialect.lockForUpdate(forAccount(tx.db, accountId).selectFrom('account_settings').select('account_id'))
    if ((await this.store.count(tx, accountId)) >= maxClients) {
      throw new OAuthError('access_denied', 'The account holds as many registered clients as its registration policy allows')
    }
  }

  /** One use of the caller's initial access token, if it presented one: its last use goes to one registration only. */
  async #spendToken(tx: Tx, caller: Caller): Promise<SpentToken | undefined> {
    if (caller.bearer === undefined) return undefined
    const spent = await this.tokens.spend(tx, caller.accountId, caller.bearer)
    if (!spent) throw invalidToken('The initial access token is unknown, expired or used up')
    return spent
  }

  /** RFC 7592 §2.1. */
  async read(caller: Caller, clientId: string): Promise<RegistrationResponse> {
    const { client } = await this.#authorized(this.db, caller, clientId)
    return { ...toView(client), registration_client_uri: clientUri(caller.issuer, clientId) }
  }

  /**
   * RFC 7592 §2.2: the request replaces the whole registration, under the ceiling the client registered with and the
   * policy as it is now. It names the client, and may carry its current secret, never a new one.
   */
  async update(caller: Caller, clientId: string, request: () => RegistrationUpdate): Promise<RegistrationResponse> {
    const { client, registration } = await this.#authorized(this.db, caller, clientId)
    const update = request()
    if (update.client_id !== clientId) throw new OAuthError('invalid_client_metadata', 'client_id must be the client this URI manages (RFC 7592 §2.2)')
    if (update.client_secret !== undefined && (client.secretHash === null || !clientSecretMatches(update.client_secret, client.secretHash))) {
      throw new OAuthError('invalid_client_metadata', 'client_secret must be the current secret; a client never chooses its own (RFC 7592 §2.2)')
    }
    const settings = await this.#settingsOf(caller.accountId)
    const ceiling = narrowedCeiling(registration.ceiling, registrationCeiling(settings, 'initial_access_token'))
    const metadata = withinPolicy(registrationMetadata(update.metadata, ceiling), ceiling)
    const unsafeUrls = await this.clients.outboundUrlProblems(metadata)
    const changed = await asRegistrationError(
      retryingDeadlocks(() =>
        transaction(this.db, async (tx) => {
          const current = await this.#authorized(tx.db, caller, clientId, true)
          return this.clients.replace(tx, current.client, await this.clients.validated(tx, caller.accountId, metadata, unsafeUrls))
        }),
      ),
    )
    return { ...changed, registration_client_uri: clientUri(caller.issuer, clientId) }
  }

  /** RFC 7592 §2.3: the client, its registration and its tokens' future go at once. */
  async delete(caller: Caller, clientId: string): Promise<void> {
    await retryingDeadlocks(() =>
      transaction(this.db, async (tx) => {
        const { client } = await this.#authorized(tx.db, caller, clientId, true)
        await this.clients.remove(tx, client)
      }),
    )
  }

  /**
   * The client, if the bearer is its registration access token. RFC 7592 §2.1: an unknown client and a wrong token
   * are both 401 `invalid_token`, so the configuration endpoint tells nobody which clients exist.
   */
  async #authorized(db: Kysely<DB>, caller: Caller, clientId: string, forChange = false): Promise<{ client: RegisteredClient; registration: ClientRegistration }> {
    if (caller.bearer === undefined) throw invalidToken('A registration access token is required', 'Bearer')
    const registration = looksLikeId('cli', clientId) ? await this.store.read(db, caller.accountId, clientId) : undefined
    if (!registration || !clientSecretMatches(caller.bearer, registration.accessTokenHash)) throw invalidToken('The registration access token is not valid for this client')
    const client = await this.clientStore.read(db, caller.accountId, clientId, forChange)
    if (!client) throw invalidToken('The registration access token is not valid for this client')
    return { client, registration }
  }

  /**
   * The initial access token's limits, when the caller presents one (in either mode, a token is checked and spent);
   * without one, `open` mode counts the attempt against the address's hourly limit.
   */
  async #initialToken(caller: Caller, settings: AccountSettings): Promise<SpentToken | undefined> {
    if (caller.bearer === undefined) {
      if (settings.registration !== 'open') throw invalidToken('This account registers clients only with an initial access token', 'Bearer')
      const retryAfter = this.rateLimit.take(`${caller.accountId} ${caller.address}`, settings.registration_rate_limit, this.clock.now())
      if (retryAfter !== undefined) throw new RateLimited(retryAfter)
      return undefined
    }
    const token = await this.tokens.usable(caller.accountId, caller.bearer)
    if (!token) throw invalidToken('The initial access token is unknown, expired or used up')
    return token
  }

  async #settingsOf(accountId: string): Promise<AccountSettings> {
    const settings = await this.settings.get(accountId)
    if (!settings) throw new ProblemError('not_found', 'No such account')
    return settings
  }
}

/** Too many open registrations from one address: 429 with `Retry-After`. */
export class RateLimited extends OAuthError {
  constructor(readonly retryAfterSeconds: number) {
    super('too_many_requests', `Too many registrations from this address; try again in ${retryAfterSeconds} s`)
  }
}

function clientUri(issuer: string, clientId: string): string {
  return `${issuer}/oauth/register/${clientId}`
}

/** RFC 6750 §3: an unauthenticated request gets a bare challenge; a bad token, the error in it. */
function invalidToken(description: string, challenge?: string): OAuthError {
  return new OAuthError('invalid_token', description, challenge ?? `Bearer error="invalid_token", error_description="${description}"`)
}

function withinPolicy(metadata: ClientMetadata, ceiling: RegistrationCeiling): ClientMetadata {
  const problems = registrationPolicyProblems(metadata, ceiling)
  if (problems.length > 0) throw metadataError(problems)
  return metadata
}

/** RFC 7591 §3.2.2: a redirect URI at fault is `invalid_redirect_uri`, any other field `invalid_client_metadata`. */
export function metadataError(problems: readonly FieldError[]): OAuthError {
  const code = problems.some((problem) => /^\/body\/redirect_uris(\/|$)/.test(problem.pointer)) ? 'invalid_redirect_uri' : 'invalid_client_metadata'
  return new OAuthError(code, problems.map((problem) => `${problem.pointer.slice('/body/'.length)} ${problem.message}`).join('; '))
}

/** The management API's validation failure, as RFC 7591 §3.2.2 says it. */
async function asRegistrationError<T>(work: Promise<T>): Promise<T> {
  try {
    return await work
  } catch (error) {
    if (error instanceof ProblemError && error.code === 'validation_failed') throw metadataError(error.errors ?? [{ pointer: '/body', message: error.message }])
    throw error
  }
}
