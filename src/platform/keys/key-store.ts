import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import type { Awaitable } from '../cache/awaitable.js'
import type { TtlCache } from '../cache/ttl-cache.js'
import type { CacheInvalidation } from '../cache/invalidation.js'
import type { SecretBox } from '../crypto/secret-box.js'
import type { Outbox } from '../events/outbox.js'
import { notFound } from '../http/problems.js'
import { looksLikeId, newId } from '../ids.js'
import type { DB, SigningAlg, SigningKeysTable } from '../storage/schema.js'
import type { Tx } from '../storage/transaction.js'
import { inList } from '../storage/in-list.js'
import { forAccount } from '../storage/account-queries.js'
import { AccountKeys, type KeySetRow, toTimeline } from './account-keys.js'
import { KeyMaterials, LoadedKey } from './key-material.js'
import { type KeyView, publicKeyEventData, toView } from './key-views.js'
import { type GeneratedKey, generateSigningKey } from './material.js'
import { type KeyTimeline, planRotation, signingKeyAt } from './policy.js'

/** Every account has one key line per algorithm: ES256 for access tokens by default, RS256 for ID tokens. */
export const SIGNING_ALGS: readonly SigningAlg[] = ['ES256', 'RS256']

/** A key pair made before the transaction that stores it, so the transaction never waits for key generation. */
export interface NewKey extends GeneratedKey {
  kid: string
  alg: SigningAlg
}

/**
 * The accounts' signing keys: generation, rotation, emergency revocation, and the cached key sets that the
 * token endpoint signs with and the management API verifies with.
 */
export class KeyStore {
  readonly #cache: TtlCache<AccountKeys>
  readonly #materials: KeyMaterials

  constructor(
    private readonly db: Kysely<DB>,
    private readonly box: SecretBox,
    private readonly clock: Clock,
    private readonly invalidation: CacheInvalidation,
    private readonly outbox: Outbox,
    /** `HERALD_CACHE_SIZE`: accounts whose key sets stay cached; each has a key per algorithm. */
    cacheSize: number,
  ) {
    this.#cache = invalidation.cache('keys', { batch: (accountIds, cached) => this.#loadMany(accountIds, cached) })
    // During a rotation an algorithm has up to three published keys: retiring, signing and upcoming.
    this.#materials = new KeyMaterials(cacheSize * SIGNING_ALGS.length * 3, {
      publicJwk: async (accountId, kid) => (await this.#halves(accountId, kid)).public_jwk,
      privateKey: (accountId, kid) => this.#openPrivateKey(accountId, kid),
    })
  }

  keysOf(accountId: string): Awaitable<AccountKeys | undefined> {
    return this.#cache.get(accountId)
  }

  /** A new key pair for every algorithm, for `createInitialKeys` or `rotate`; generated outside any transaction. */
  async generate(): Promise<NewKey[]> {
    const now = this.clock.now()
    return Promise.all(
      SIGNING_ALGS.map(async (alg) => {
        const kid = newId('key', now)
        return { kid, alg, ...(await generateSigningKey(kid, alg)) }
      }),
    )
  }

  /** The first keys of a new account sign at once: nobody can have cached its JWKS yet. One statement for them all. */
  async createInitialKeys(tx: Tx, accountId: string, keys: readonly NewKey[]): Promise<void> {
    const now = this.clock.now()
    const rows = keys.map((key) => this.#keyRow(accountId, key, now, now))
    await forAccount(tx.db, accountId).insertInto('signing_keys', rows).execute()
  }

  /** Routine rotation of every algorithm's key, to `fresh`; see `planRotation` for the timeline. Returns the new keys. */
  async rotate(tx: Tx, accountId: string, longestTokenSeconds: number, fresh: readonly NewKey[]): Promise<KeyView[]> {
    const now = this.clock.now()
    const current = (await this.#rows(tx.db, accountId)).map(toTimeline)
    const created: KeyView[] = []
    for (const key of fresh) {
      const plan = planRotation(current, key.alg, now, longestTokenSeconds)
      for (const retiring of plan.retiring) {
        await forAccount(tx.db, accountId)
          .updateTable('signing_keys')
          .set({ retires_at: retiring.retiresAt, published_until: retiring.publishedUntil })
          .where('id', '=', retiring.kid)
          .execute()
      }
      created.push(await this.#insertKey(tx, accountId, key, now, plan.signsFrom))
    }
    await this.outbox.record(tx, accountId, 'oauth.key.rotated', { keys: created.map(publicKeyEventData) }, now)
    await this.invalidation.record(tx, 'keys', accountId)
    return created
  }

  /**
   * Emergency revocation: the key leaves the JWKS at once and signs nothing more. If no other key of its
   * algorithm can sign now, the upcoming one is brought forward, or a new one made, so signing never stops.
   */
  async revoke(tx: Tx, accountId: string, kid: string, longestTokenSeconds: number): Promise<KeyView> {
    const now = this.clock.now()
    const rows = await this.#rows(tx.db, accountId)
    const row = looksLikeId('key', kid) ? rows.find((candidate) => candidate.id === kid && candidate.revoked_at === null) : undefined
    if (!row) throw notFound(`Key ${kid}`)
    await forAccount(tx.db, accountId).updateTable('signing_keys').set({ revoked_at: now }).where('id', '=', kid).execute()

    const remaining = rows.filter((candidate) => candidate.id !== kid).map(toTimeline)
    if (row.signs_from > now) await this.#handOverPast(tx, accountId, toTimeline(row), remaining, longestTokenSeconds)
    if (!signingKeyAt(remaining, row.alg, now)) {
      const upcoming = remaining
        .filter((key) => key.alg === row.alg && key.revokedAt === null && key.signsFrom > now)
        .sort((a, b) => a.signsFrom - b.signsFrom)[0]
      if (upcoming) {
        await forAccount(tx.db, accountId).updateTable('signing_keys').set({ signs_from: now }).where('id', '=', upcoming.kid).execute()
      } else {
        // Rare (an emergency with no successor ready): the transaction waits for this one key's generation.
        const kid = newId('key', now)
        await this.#insertKey(tx, accountId, { kid, alg: row.alg, ...(await generateSigningKey(kid, row.alg)) }, now, now)
      }
    }
    const revoked = toView({ ...row, revoked_at: now }, now)
    await this.outbox.record(tx, accountId, 'oauth.key.revoked', publicKeyEventData(revoked), now)
    await this.invalidation.record(tx, 'keys', accountId)
    return revoked
  }

  /**
   * A revoked upcoming key will never take over, so the keys it was to supersede hand over to the next
   * upcoming key instead, or keep signing if there is none.
   */
  async #handOverPast(tx: Tx, accountId: string, revoked: KeyTimeline, remaining: readonly KeyTimeline[], longestTokenSeconds: number): Promise<void> {
    const successor = remaining
      .filter((key) => key.alg === revoked.alg && key.revokedAt === null && key.signsFrom > revoked.signsFrom)
      .sort((a, b) => a.signsFrom - b.signsFrom)[0]
    const retiresAt = successor?.signsFrom ?? null
    await forAccount(tx.db, accountId)
      .updateTable('signing_keys')
      .set({ retires_at: retiresAt, published_until: retiresAt === null ? null : retiresAt + longestTokenSeconds * 1000 })
      .where('alg', '=', revoked.alg)
      .where('retires_at', '=', revoked.signsFrom)
      .where('revoked_at', 'is', null)
      .execute()
    // Keep the caller's view of the timeline in step with the rows it just changed.
    for (const key of remaining) {
      if (key.alg === revoked.alg && key.retiresAt === revoked.signsFrom) key.retiresAt = retiresAt
    }
  }

  async list(accountId: string): Promise<KeyView[]> {
    const now = this.clock.now()
    return (await this.#rows(this.db, accountId)).map((row) => toView(row, now))
  }

  async #insertKey(tx: Tx, accountId: string, key: NewKey, now: number, signsFrom: number): Promise<KeyView> {
    const row = this.#keyRow(accountId, key, now, signsFrom)
    await forAccount(tx.db, accountId).insertInto('signing_keys', row).execute()
    return toView(row, now)
  }

  #keyRow(accountId: string, { kid, alg, publicJwk, privatePem }: NewKey, now: number, signsFrom: number): SigningKeysTable {
    return {
      id: kid,
      account_id: accountId,
      alg,
      public_jwk: JSON.stringify(publicJwk),
      private_key: this.box.seal(privatePem, sealContext(accountId, kid)),
      created_at: now,
      signs_from: signsFrom,
      retires_at: null,
      published_until: null,
      revoked_at: null,
    }
  }

  #rows(db: Kysely<DB>, accountId: string): Promise<SigningKeysTable[]> {
    return forAccount(db, accountId).selectFrom('signing_keys').selectAll().orderBy('signs_from').execute()
  }

  /** A key's halves as its row stores them: the public JWK's text and the sealed private key. */
  async #halves(accountId: string, kid: string): Promise<Pick<SigningKeysTable, 'public_jwk' | 'private_key'>> {
    const row = await forAccount(this.db, accountId).selectFrom('signing_keys').select(['public_jwk', 'private_key']).where('id', '=', kid).executeTakeFirst()
    if (!row) throw new Error(`Key ${kid} of account ${accountId} is gone`)
    return row
  }

  /** A key's private key as PEM, opened from its row (a key sealed for another row is refused: SecretBox.open), and its public JWK. */
  async #openPrivateKey(accountId: string, kid: string): Promise<{ privatePem: string; publicJwk: string }> {
    const row = await this.#halves(accountId, kid)
    return { privatePem: this.box.open(row.private_key, sealContext(accountId, kid)), publicJwk: row.public_jwk }
  }

  /**
   * The accounts' usable keys, each set by account; an account without one is left out. Neither half of a key is read
   * here: each is read when first needed, and the material of a key already known is reused (KeyMaterials).
   */
  async #loadMany(accountIds: readonly string[], cached: (accountId: string) => AccountKeys | undefined): Promise<Map<string, AccountKeys>> {
    const now = this.clock.now()
    const rows = await this.db
      .selectFrom('signing_keys')
      .select(['id', 'account_id', 'alg', 'signs_from', 'retires_at', 'published_until', 'revoked_at'])
      .where('account_id', 'in', inList(accountIds))
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('published_until', 'is', null), eb('published_until', '>', now)]))
      .orderBy('signs_from')
      .execute()
    const byAccount = new Map<string, KeySetRow[]>()
    for (const row of rows) {
      const accountRows = byAccount.get(row.account_id)
      if (accountRows) accountRows.push(row)
      else byAccount.set(row.account_id, [row])
    }
    const loaded = new Map<string, AccountKeys>()
    for (const [accountId, accountRows] of byAccount) {
      const keys = new AccountKeys(accountRows.map((row) => new LoadedKey(toTimeline(row), this.#materials.of(row))))
      const previous = cached(accountId)
      loaded.set(accountId, previous?.sameAs(keys) ? previous : keys)
    }
    return loaded
  }
}

/** The row identity bound into the sealed private key, so it cannot be replayed into another row. */
function sealContext(accountId: string, kid: string): string {
  return `signing_keys:${accountId}:${kid}`
}

