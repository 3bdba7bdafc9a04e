import type { JWK } from 'jose'
import { LRUCache } from 'lru-cache'
import { sharedString } from '../cache/shared-values.js'
import type { SigningAlg, SigningKeysTable } from '../storage/schema.js'
import type { JwtSigner } from './material.js'
import { importPrivateKey, isPairOf } from './material.js'
import type { KeyTimeline } from './policy.js'

/** A key row as the key sets are loaded: its identity alone; the public and private keys are read when first needed. */
export type KeyRow = Pick<SigningKeysTable, 'account_id' | 'id' | 'alg'>

/** Reads a key's halves from its row: the public JWK's text, and the sealed private key opened as PEM. */
export interface KeyReader {
  publicJwk(accountId: string, kid: string): Promise<string>
  /** Refuses a private key sealed for another row. */
  privateKey(accountId: string, kid: string): Promise<{ privatePem: string; publicJwk: string }>
}

/**
 * One key's material, read from its row only when first needed. The private key is read, opened and imported when
 * the key is first to sign, and kept as a `KeyObject` from then on: an account's ID-token key costs nothing while it
 * signs only access tokens, and no sealed or plain text of a private key stays in memory. The public key's JWK text
 * is read when something first verifies with the key or publishes it, and kept; each use parses it afresh, so no
 * imported copy (which jose would keep for as long as the object lives) outlives the verification.
 */
class KeyMaterial {
  #signer: JwtSigner | undefined
  #signerRead: Promise<JwtSigner> | undefined
  #publicJwkText: string | undefined
  #publicJwkRead: Promise<string> | undefined

  constructor(
    readonly accountId: string,
    readonly kid: string,
    readonly alg: SigningAlg,
    private readonly reader: KeyReader,
  ) {}

  /**
   * Whether `row` holds this material. Its id names it (ids are random and never reused), but a row of another
   * account or algorithm under the same id is taken for another key.
   */
  isIn(row: KeyRow): boolean {
    return this.accountId === row.account_id && this.alg === row.alg
  }

  /** The signer, once `loadSigner` has resolved; the same object for as long as the material is kept. */
  get signer(): JwtSigner | undefined {
    return this.#signer
  }

  /**
   * Reads and imports the private key; concurrent callers share one read, and a failed one is tried again next time.
   * The read's promise is dropped once settled: the signer alone is kept.
   */
  loadSigner(): Promise<JwtSigner> {
    if (this.#signer) return Promise.resolve(this.#signer)
    this.#signerRead ??= this.reader
      .privateKey(this.accountId, this.kid)
      .then(({ privatePem, publicJwk }) => {
        const privateKey = importPrivateKey(privatePem)
        if (!isPairOf(privateKey, JSON.parse(publicJwk) as JWK)) throw new Error(`The private key of ${this.kid} is not the one its public key belongs to`)
        return (this.#signer = { kid: this.kid, alg: this.alg, privateKey })
      })
      .finally(() => (this.#signerRead = undefined))
    return this.#signerRead
  }

  /** The public JWK, a new object every time (see the class comment); concurrent first callers share one read. */
  async publicJwk(): Promise<JWK> {
    if (this.#publicJwkText === undefined) {
      this.#publicJwkRead ??= this.reader.publicJwk(this.accountId, this.kid).finally(() => (this.#publicJwkRead = undefined))
      this.#publicJwkText = await this.#publicJwkRead
    }
    return JSON.parse(this.#publicJwkText) as JWK
  }
}

/**
 * A key's public half could not be read: the database failed, not the token. jose's key resolvers pass it on, and
 * their callers, which take any other error for a bad token, rethrow it, so that an outage answers 503 (its cause is
 * the database's error) rather than calling a good token invalid.
 */
export class KeyReadFailure extends Error {}

/** A key as the token endpoint signs with it and verifiers check with it: its timeline now, its material once. */
export class LoadedKey implements KeyTimeline {
  readonly kid: string
  readonly alg: SigningAlg
  readonly signsFrom: number
  readonly retiresAt: number | null
  readonly publishedUntil: number | null
  readonly revokedAt: number | null

  constructor(
    timeline: KeyTimeline,
    readonly material: KeyMaterial,
  ) {
    this.kid = timeline.kid
    this.alg = timeline.alg
    this.signsFrom = timeline.signsFrom
    this.retiresAt = timeline.retiresAt
    this.publishedUntil = timeline.publishedUntil
    this.revokedAt = timeline.revokedAt
  }

  sameAs(other: LoadedKey | undefined): boolean {
    return (
      other !== undefined &&
      other.material === this.material &&
      other.kid === this.kid &&
      other.alg === this.alg &&
      other.signsFrom === this.signsFrom &&
      other.retiresAt === this.retiresAt &&
      other.publishedUntil === this.publishedUntil &&
      other.revokedAt === this.revokedAt
    )
  }

  /** Rejects with a KeyReadFailure, naming what failed as its cause. */
  publicJwk(): Promise<JWK> {
    return this.material.publicJwk().catch((error: unknown) => {
      throw new KeyReadFailure(`The public key of ${this.kid} could not be read`, { cause: error })
    })
  }
}

/**
 * Key material by key id, shared by every reload of every account's key set: a reload that finds a row as it was
 * reuses its material, so it never reads, decrypts or imports a private key again. A key's material never changes
 * once written: Herald never rewrites a key's halves, and its ids are random and never reused.
 */
export class KeyMaterials {
  readonly #byKid: LRUCache<string, KeyMaterial>

  constructor(
    maxEntries: number,
    private readonly reader: KeyReader,
  ) {
    this.#byKid = new LRUCache({ max: maxEntries })
  }

  of(row: KeyRow): KeyMaterial {
    const known = this.#byKid.get(row.id)
    if (known?.isIn(row)) return known
    const material = new KeyMaterial(row.account_id, row.id, sharedString(row.alg), this.reader)
    this.#byKid.set(row.id, material)
    return material
  }

  get size(): number {
    return this.#byKid.size
  }
}
