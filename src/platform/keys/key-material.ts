import type { KeyObject } from 'node:crypto'
import type { JWK } from 'jose'
import { LRUCache } from 'lru-cache'
import type { SigningAlg, SigningKeysTable } from '../storage/schema.js'
import type { JwtSigner } from './material.js'
import { importPrivateKey, importPublicKey } from './material.js'
import type { KeyTimeline } from './policy.js'

type Opener = (row: Pick<SigningKeysTable, 'account_id' | 'id' | 'private_key'>) => string

/**
 * One key's material as its row stores it. The sealed private key is opened when the row is first read, so a key
 * sealed for another row is refused there, and opened again only when something first signs with it; each half is
 * imported into a `KeyObject` only when something first signs or verifies with it. An account's ID-token key is
 * never imported while it signs only access tokens, and a verifier never imports a private key. Its plaintext is
 * not kept: tens of thousands of accounts would hold megabytes of PEM text nothing reads.
 */
class KeyMaterial {
  #privateKey: KeyObject | undefined
  #publicKey: KeyObject | undefined
  #publicJwk: JWK | undefined

  constructor(
    readonly row: Pick<SigningKeysTable, 'account_id' | 'id' | 'private_key' | 'public_jwk'>,
    private readonly open: Opener,
  ) {
    open(row)
  }

  /** Whether `row` holds this material: a row whose sealed columns differ holds another. */
  isIn(row: Pick<SigningKeysTable, 'account_id' | 'private_key' | 'public_jwk'>): boolean {
    return this.row.account_id === row.account_id && this.row.private_key === row.private_key && this.row.public_jwk === row.public_jwk
  }

  get privateKey(): KeyObject {
    return (this.#privateKey ??= importPrivateKey(this.open(this.row)))
  }

  get publicJwk(): JWK {
    return (this.#publicJwk ??= JSON.parse(this.row.public_jwk) as JWK)
  }

  get publicKey(): KeyObject {
    return (this.#publicKey ??= importPublicKey(this.publicJwk))
  }
}

/** A key as the token endpoint signs with it and verifiers check with it: its timeline now, its material once. */
export class LoadedKey implements KeyTimeline, JwtSigner {
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

  get privateKey(): KeyObject {
    return this.material.privateKey
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

  get publicKey(): KeyObject {
    return this.material.publicKey
  }

  get publicJwk(): JWK {
    return this.material.publicJwk
  }
}

/**
 * Opened key material by key id, shared by every reload of every account's key set: a reload that finds a row as it
 * was reuses its material, so the cache's time-to-live costs a query, never a decryption or an import. A key's
 * material never changes once written; a row whose sealed columns differ all the same is opened afresh.
 */
export class KeyMaterials {
  readonly #byKid: LRUCache<string, KeyMaterial>

  constructor(
    maxEntries: number,
    /** Decrypts a row's sealed private key to PEM, checking that it was sealed for this row. */
    private readonly open: Opener,
  ) {
    this.#byKid = new LRUCache({ max: maxEntries })
  }

  of(row: Pick<SigningKeysTable, 'account_id' | 'id' | 'private_key' | 'public_jwk'>): KeyMaterial {
    const known = this.#byKid.get(row.id)
    if (known?.isIn(row)) return known
    const material = new KeyMaterial({ account_id: row.account_id, id: row.id, private_key: row.private_key, public_jwk: row.public_jwk }, this.open)
    this.#byKid.set(row.id, material)
    return material
  }

  get size(): number {
    return this.#byKid.size
  }
}
