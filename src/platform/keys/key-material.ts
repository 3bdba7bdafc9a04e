import type { JWK } from 'jose'
import { LRUCache } from 'lru-cache'
import type { SigningAlg, SigningKeysTable } from '../storage/schema.js'
import type { JwtSigner } from './material.js'
import { importPrivateKey, isPairOf } from './material.js'
import type { KeyTimeline } from './policy.js'

/** A key row as the key sets are loaded: everything but the sealed private key, which is read when first needed. */
export type PublicKeyRow = Pick<SigningKeysTable, 'account_id' | 'id' | 'alg' | 'public_jwk'>

/** Reads a key's sealed private key, opens it (refusing one sealed for another row) and answers it as PEM. */
export type PrivateKeyReader = (accountId: string, kid: string) => Promise<string>

/**
 * One key's material. The private key is read, opened and imported only when the key is first to sign, and kept
 * as a `KeyObject` from then on: an account's ID-token key costs nothing while it signs only access tokens, and no
 * sealed or plain text of a private key stays in memory. The public key is kept as its JWK text; each use parses it
 * afresh, so no imported copy (which jose would keep for as long as the object lives) outlives the verification.
 */
class KeyMaterial {
  #signer: JwtSigner | undefined
  #loading: Promise<JwtSigner> | undefined

  constructor(
    readonly accountId: string,
    readonly kid: string,
    readonly alg: SigningAlg,
    readonly publicJwkText: string,
    private readonly readPrivateKey: PrivateKeyReader,
  ) {}

  /** Whether `row` holds this material: a row whose account or public key differs holds another. */
  isIn(row: PublicKeyRow): boolean {
    return this.accountId === row.account_id && this.alg === row.alg && this.publicJwkText === row.public_jwk
  }

  /** The signer, once `loadSigner` has resolved; the same object for as long as the material is kept. */
  get signer(): JwtSigner | undefined {
    return this.#signer
  }

  /** Reads and imports the private key; concurrent callers share one read, and a failed one is tried again next time. */
  loadSigner(): Promise<JwtSigner> {
    this.#loading ??= this.readPrivateKey(this.accountId, this.kid).then(
      (pem) => {
        const privateKey = importPrivateKey(pem)
        if (!isPairOf(privateKey, this.publicJwk)) throw new Error(`The private key of ${this.kid} is not the one its public key belongs to`)
        return (this.#signer = { kid: this.kid, alg: this.alg, privateKey })
      },
      (error: unknown) => {
        this.#loading = undefined
        throw error
      },
    )
    return this.#loading
  }

  /** The public JWK, a new object every time (see the class comment). */
  get publicJwk(): JWK {
    return JSON.parse(this.publicJwkText) as JWK
  }
}

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

  get publicJwk(): JWK {
    return this.material.publicJwk
  }
}

/**
 * Key material by key id, shared by every reload of every account's key set: a reload that finds a row as it was
 * reuses its material, so it never reads, decrypts or imports a private key again. A key's material never changes
 * once written; a row whose public key differs all the same is taken for another key.
 */
export class KeyMaterials {
  readonly #byKid: LRUCache<string, KeyMaterial>

  constructor(
    maxEntries: number,
    private readonly readPrivateKey: PrivateKeyReader,
  ) {
    this.#byKid = new LRUCache({ max: maxEntries })
  }

  of(row: PublicKeyRow): KeyMaterial {
    const known = this.#byKid.get(row.id)
    if (known?.isIn(row)) return known
    const material = new KeyMaterial(row.account_id, row.id, row.alg, row.public_jwk, this.readPrivateKey)
    this.#byKid.set(row.id, material)
    return material
  }

  get size(): number {
    return this.#byKid.size
  }
}
