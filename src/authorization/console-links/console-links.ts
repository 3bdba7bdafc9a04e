import { type Kysely, sql } from 'kysely'
import { type Clock, toRfc3339 } from '../../platform/clock.js'
import { randomToken } from '../../platform/crypto/random.js'
import { ProblemError, notFound } from '../../platform/http/problems.js'
import { newId } from '../../platform/ids.js'
import type { KeyStore } from '../../platform/keys/key-store.js'
import { MANAGEMENT_SCOPES } from '../../platform/management-auth/scopes.js'
import type { SettingsStore } from '../../platform/settings/settings.js'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { SqlDialect } from '../../platform/storage/dialects/index.js'
import type { DB } from '../../platform/storage/schema.js'
import type { ClientStore } from '../clients/client-store.js'
import { secretDigest } from '../sign-in/flow-store.js'
import { issueAccessToken } from '../token/access-token.js'
import type { TokenResponse } from '../token/grants.js'

/** A link lapses after this long at most, unused. */
export const MAX_LINK_LIFETIME_SECONDS = 600
/** The console's token lives at most this long (less when the account's access tokens are shorter). */
export const CONSOLE_TOKEN_LIFETIME_SECONDS = 900
/**
 * What a link grants unless it names its scopes: the webhook area, as the console's home pages use it. A token held
 * by a browser gets the rest (keys, clients, sign-in) only when the operator asks for it.
 */
export const DEFAULT_LINK_SCOPES = ['herald:webhooks:read', 'herald:webhooks:write', 'herald:events:publish'] as const

export interface CreatedLink {
  url: string
  expires_at: string
  scope: string
}

/**
 * Single-use sign-in links to the console, for operators (`herald console-link`, the operator API). A link carries a
 * random code, of which only a digest is stored; the console exchanges it once, before it lapses, for a short-lived
 * management token of the account's original management client, with the link's scopes. The code travels in the
 * URL's fragment, which browsers never send to a server nor put in a Referer.
 */
export class ConsoleLinks {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: SqlDialect,
    private readonly clients: ClientStore,
    private readonly settings: SettingsStore,
    private readonly keys: KeyStore,
    private readonly clock: Clock,
    private readonly publicUrl: string,
  ) {}

  /** `scopes` default to DEFAULT_LINK_SCOPES; `lifetime` to the most a link may have. */
  async create(accountId: string, scopes: readonly string[] | undefined, lifetime = MAX_LINK_LIFETIME_SECONDS): Promise<CreatedLink> {
    const granted = scopes ?? DEFAULT_LINK_SCOPES
    const unknown = granted.filter((scope) => !(MANAGEMENT_SCOPES as readonly string[]).includes(scope))
    if (granted.length === 0 || unknown.length > 0) {
      const message = granted.length === 0 ? 'must name at least one scope' : `names what is not a management scope: ${unknown.join(' ')}`
      throw new ProblemError('validation_failed', `scope ${message}`, [{ pointer: '/body/scope', message }])
    }
    if (!Number.isInteger(lifetime) || lifetime < 1 || lifetime > MAX_LINK_LIFETIME_SECONDS) {
      throw new ProblemError('validation_failed', `expires_in must be 1 to ${MAX_LINK_LIFETIME_SECONDS} seconds`, [{ pointer: '/body/expires_in', message: 'is out of range' }])
    }
    const account = await this.db.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst()
    if (!account) throw notFound(`Account ${accountId}`)
    const code = randomToken()
    const now = this.clock.now()
    const scope = [...new Set(granted)].join(' ')
    const expiresAt = now + lifetime * 1000
    await forAccount(this.db, accountId)
      .insertInto('console_links', { id: newId('cl', now), code_hash: secretDigest(code), scope, expires_at: expiresAt, used_at: null, created_at: now })
      .execute()
    const fragment = new URLSearchParams({ account: accountId, link: code })
    return { url: `${this.publicUrl}/console/#${fragment}`, expires_at: toRfc3339(expiresAt), scope }
  }

  /**
   * Spends the link's code and answers the console's token; an unknown, spent or lapsed code is refused alike. What
   * the token needs is gathered first, so that nothing after the spending can fail and waste the link.
   */
  async exchange(accountId: string, issuer: string, code: string): Promise<TokenResponse> {
    const now = this.clock.now()
    // The account's route found it in the cache, which may still hold an account deleted a moment ago.
    const account = await this.db.selectFrom('accounts').select('admin_client_id').where('id', '=', accountId).executeTakeFirst()
    if (!account) throw notFound(`Account ${accountId}`)
    const [client, settings, keys] = await Promise.all([this.clients.find(accountId, account.admin_client_id), this.settings.get(accountId), this.keys.keysOf(accountId)])
    const signer = settings && (await keys?.signer(settings.access_token_signing_alg, now))
    if (!client || !settings || !signer) throw new ProblemError('internal_error', "The account's management client, settings or key is missing")
    const spent = await forAccount(this.db, accountId)
      .updateTable('console_links')
      .set({ used_at: now })
      .where('code_hash', '=', secretDigest(code))
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .returning('scope')
      .executeTakeFirst()
    if (!spent) throw new ProblemError('invalid_token', 'The sign-in link is unknown, used or expired')
    const lifetime = Math.min(settings.access_token_ttl, CONSOLE_TOKEN_LIFETIME_SECONDS)
    const { token, expiresIn } = issueAccessToken({
      issuer,
      subject: client.id,
      client,
      audience: issuer,
      scope: spent.scope,
      settings: { ...settings, access_token_ttl: lifetime },
      signer,
      nowMs: now,
    })
    return { access_token: token, token_type: 'Bearer', expires_in: expiresIn, scope: spent.scope }
  }

  /** Housekeeping across every account, not a tenant's query: lapsed links, at most `limit` at a time. */
  async pruneExpired(limit: number): Promise<number> {
    return this.dialect.deleteBatch(this.db, 'console_links', { condition: sql`expires_at <= ${this.clock.now()}`, orderBy: 'expires_at', limit })
  }
}
