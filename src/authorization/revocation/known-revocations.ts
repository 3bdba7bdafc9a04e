import { LRUCache } from 'lru-cache'
import type { Awaitable } from '../../platform/cache/awaitable.js'
import type { CacheInvalidation } from '../../platform/cache/invalidation.js'
import type { Clock } from '../../platform/clock.js'

/** A revoked id and when the record of it lapses (epoch milliseconds). */
export interface RevokedId {
  jti: string
  expires_at: number
}

/** Reads an account's unexpired revocations, at most `limit` of them. */
export type RevocationReader = (accountId: string, now: number, limit: number) => Promise<RevokedId[]>

export interface KnownRevocationsOptions {
  /** How long a list read from the database is trusted without a change (the caches' time-to-live backstop). */
  ttlMs: number
  /** An account with more unexpired revocations than this is not kept: its checks read the database. */
  maxPerAccount: number
  /** Revoked ids kept at most over every account; the least recently used account is forgotten first. */
  maxIds: number
}

/** An account whose revocations are too many to keep. */
const TOO_MANY = 'too_many'

interface Kept {
  ids: Map<string, number> | typeof TOO_MANY
  readAt: number
}

/**
 * Every cached account's unexpired revocations, in memory, so that checking a token's revocation reads nothing.
 * An account's list is read whole once, then kept current by the change each revocation records in its own
 * transaction: this process learns of it when it commits, other processes through a notification (PostgreSQL) or
 * the change log (CacheInvalidation), as they learn of a client's changed secret. A change that comes while the
 * account's list is being read joins the list read; a gap in the change log forgets every list.
 */
export class KnownRevocations {
  readonly #accounts: LRUCache<string, Kept>
  /** Lists being read, with the revocations that changed meanwhile. */
  readonly #reading = new Map<string, { promise: Promise<Kept>; changes: RevokedId[] }>()
  /** Bumped when everything is forgotten: a read begun before stores nothing. */
  #generation = 0
  /** Past this, an account's list is not kept: it could not fit within maxIds, and would be read on every check. */
  readonly #maxPerAccount: number

  constructor(
    private readonly read: RevocationReader,
    invalidation: CacheInvalidation,
    private readonly clock: Clock,
    private readonly options: KnownRevocationsOptions,
  ) {
    this.#accounts = new LRUCache({ maxSize: options.maxIds, sizeCalculation: (kept) => (kept.ids === TOO_MANY ? 1 : kept.ids.size + 1) })
    this.#maxPerAccount = Math.min(options.maxPerAccount, options.maxIds - 1)
    invalidation.follow('revocations', (key) => this.#changed(key), () => this.#forgetAll())
  }

  /** The change a revocation records, for every process's KnownRevocations. */
  static change(accountId: string, jti: string, expiresAt: number): string {
    return `${accountId} ${expiresAt} ${jti}`
  }

  /** Whether `jti` is revoked; undefined when the account has too many revocations to keep (ask the database). */
  isRevoked(accountId: string, jti: string): Awaitable<boolean | undefined> {
    const kept = this.#accounts.get(accountId)
    if (kept !== undefined && this.clock.now() - kept.readAt < this.options.ttlMs) return answer(kept, jti)
    return this.#readList(accountId).then((fresh) => answer(fresh, jti))
  }

  #readList(accountId: string): Promise<Kept> {
    const reading = this.#reading.get(accountId)
    if (reading) return reading.promise
    const readAt = this.clock.now()
    const generation = this.#generation
    const changes: RevokedId[] = []
    const promise = this.read(accountId, readAt, this.#maxPerAccount + 1).then(
      (rows) => {
        this.#reading.delete(accountId)
        // A change committed before the read may be both in it and among the changes: counted once.
        const ids = new Map([...rows, ...changes].map((row) => [row.jti, row.expires_at]))
        const kept: Kept = { ids: ids.size > this.#maxPerAccount ? TOO_MANY : ids, readAt }
        if (generation === this.#generation) this.#accounts.set(accountId, kept)
        return kept
      },
      (error: unknown) => {
        this.#reading.delete(accountId)
        throw error
      },
    )
    this.#reading.set(accountId, { promise, changes })
    return promise
  }

  #changed(key: string): void {
    const first = key.indexOf(' ')
    const second = key.indexOf(' ', first + 1)
    if (first < 0 || second < 0) return
    const accountId = key.slice(0, first)
    const revoked = { expires_at: Number(key.slice(first + 1, second)), jti: key.slice(second + 1) }
    this.#reading.get(accountId)?.changes.push(revoked)
    const kept = this.#accounts.peek(accountId)
    // The same change may come more than once: after its commit, by notification and from the change log.
    if (kept === undefined || kept.ids === TOO_MANY || kept.ids.has(revoked.jti)) return
    if (kept.ids.size >= this.#maxPerAccount) {
      this.#accounts.set(accountId, { ids: TOO_MANY, readAt: kept.readAt })
      return
    }
    kept.ids.set(revoked.jti, revoked.expires_at)
    // A new entry object: lru-cache measures a value again only when it is another one.
    this.#accounts.set(accountId, { ids: kept.ids, readAt: kept.readAt })
  }

  #forgetAll(): void {
    this.#generation++
    this.#accounts.clear()
  }
}

function answer(kept: Kept, jti: string): boolean | undefined {
  return kept.ids === TOO_MANY ? undefined : kept.ids.has(jti)
}
