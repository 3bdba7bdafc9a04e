import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto'
import { sha256 } from './random.js'

/**
 * Encrypts secrets at rest (private keys, webhook signing secrets) under `HERALD_SECRET_KEY`.
 *
 * Sealed format: `v1.<keyId>.<nonce>.<ciphertext+tag>` (base64url parts). AES-256-GCM with a random 96-bit
 * nonce; the caller's `context` (the row's identity, such as `signing_key:acct_…:key_…`) is bound as associated
 * data, so a sealed value copied into another row fails to open. The key id names which master key sealed the
 * value, so the master key can be rotated: list the new key first and the old ones after it.
 */
export class SecretBox {
  readonly #keys: ReadonlyMap<string, Buffer>
  readonly #current: { id: string; key: Buffer }
  readonly #macKeys: readonly Buffer[]

  constructor(masterKeys: readonly Buffer[]) {
    const first = masterKeys[0]
    if (!first) throw new Error('SecretBox needs at least one master key')
    this.#keys = new Map(masterKeys.map((key) => [keyIdOf(key), key]))
    this.#current = { id: keyIdOf(first), key: first }
    this.#macKeys = masterKeys.map(macKeyOf)
  }

  /** Parses `HERALD_SECRET_KEY`: one or more comma-separated 32-byte keys, base64 or hex; the first one seals. */
  static fromSecretKeyText(text: string): SecretBox {
    return new SecretBox(text.split(',').map((part) => decodeMasterKey(part.trim())))
  }

  seal(plaintext: string, context: string): string {
    const nonce = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.#current.key, nonce)
    cipher.setAAD(Buffer.from(context))
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()])
    return ['v1', this.#current.id, nonce.toString('base64url'), ciphertext.toString('base64url')].join('.')
  }

  open(sealed: string, context: string): string {
    const [version, keyId, nonceText, bodyText, extra] = sealed.split('.')
    if (version !== 'v1' || !keyId || !nonceText || !bodyText || extra !== undefined) {
      throw new Error('sealed secret has an unknown format')
    }
    const key = this.#keys.get(keyId)
    if (!key) throw new Error(`sealed secret uses master key ${keyId}, which HERALD_SECRET_KEY does not list`)
    const body = Buffer.from(bodyText, 'base64url')
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonceText, 'base64url'))
    decipher.setAAD(Buffer.from(context))
    decipher.setAuthTag(body.subarray(body.length - 16))
    return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString('utf8')
  }

  /**
   * Secrets derived from `context` (HMAC-SHA256, base64url) under each master key, the sealing key's first: a secret
   * tied to a row's identity can be made again when it is needed rather than stored, and one made before a rotation
   * is still recognised. The MAC key is derived apart from the encryption key (HKDF), so neither use weakens the other.
   */
  derive(context: string): string[] {
    return this.#macKeys.map((key) => createHmac('sha256', key).update(context).digest('base64url'))
  }

  /** Whether a value was sealed with an older master key and should be sealed again. */
  isStale(sealed: string): boolean {
    return sealed.split('.')[1] !== this.#current.id
  }
}

function macKeyOf(key: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'herald derived secrets', 32))
}

/** A short public fingerprint of a master key; safe to store because the key itself has 256 bits of entropy. */
function keyIdOf(key: Buffer): string {
  return sha256(key).subarray(0, 6).toString('hex')
}

export function decodeMasterKey(text: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64')
  if (key.length !== 32) {
    throw new Error('HERALD_SECRET_KEY must be 32 bytes, base64 or hex encoded (generate one with `openssl rand -base64 32`)')
  }
  return key
}

export function generateMasterKeyText(): string {
  return randomBytes(32).toString('base64')
}
