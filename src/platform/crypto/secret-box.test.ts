import { createHmac, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { SecretBox, decodeMasterKey, generateMasterKeyText } from './secret-box.js'

const CONTEXT = 'signing_keys:acct_A:key_A'
const PLAINTEXT = '-----BEGIN PRIVATE KEY-----\nnot really a key\n-----END PRIVATE KEY-----\n'

/** Flips one bit of a base64url part of a sealed value and returns the new sealed value. */
function flipBit(sealed: string, part: number, byte = 0): string {
  const parts = sealed.split('.')
  const bytes = Buffer.from(parts[part]!, 'base64url')
  bytes[byte] = bytes[byte]! ^ 0x01
  parts[part] = bytes.toString('base64url')
  return parts.join('.')
}

describe('SecretBox', () => {
  it('opens what it sealed, in the v1.<keyId>.<nonce>.<ciphertext> format, without the plaintext in it', () => {
    const box = new SecretBox([randomBytes(32)])
    const sealed = box.seal(PLAINTEXT, CONTEXT)
    expect(sealed).toMatch(/^v1\.[0-9a-f]{12}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/)
    expect(sealed).not.toContain('BEGIN')
    expect(box.open(sealed, CONTEXT)).toBe(PLAINTEXT)
  })

  it('uses a fresh nonce each time: sealing the same value twice gives different texts', () => {
    const box = new SecretBox([randomBytes(32)])
    const a = box.seal(PLAINTEXT, CONTEXT)
    const b = box.seal(PLAINTEXT, CONTEXT)
    expect(a).not.toBe(b)
    expect(a.split('.')[2]).not.toBe(b.split('.')[2])
  })

  it('refuses to open a value under another context (a sealed value copied into another row)', () => {
    const box = new SecretBox([randomBytes(32)])
    const sealed = box.seal(PLAINTEXT, CONTEXT)
    expect(() => box.open(sealed, 'signing_keys:acct_A:key_B')).toThrow()
    expect(() => box.open(sealed, 'signing_keys:acct_B:key_A')).toThrow()
  })

  it('refuses a tampered ciphertext, tag or nonce', () => {
    const box = new SecretBox([randomBytes(32)])
    const sealed = box.seal(PLAINTEXT, CONTEXT)
    const body = Buffer.from(sealed.split('.')[3]!, 'base64url')
    expect(() => box.open(flipBit(sealed, 3, 0), CONTEXT)).toThrow()
    expect(() => box.open(flipBit(sealed, 3, body.length - 1), CONTEXT)).toThrow()
    expect(() => box.open(flipBit(sealed, 2, 0), CONTEXT)).toThrow()
  })

  it('refuses a malformed value', () => {
    const box = new SecretBox([randomBytes(32)])
    const sealed = box.seal(PLAINTEXT, CONTEXT)
    expect(() => box.open(sealed.replace(/^v1/, 'v2'), CONTEXT)).toThrow(/unknown format/)
    expect(() => box.open(`${sealed}.extra`, CONTEXT)).toThrow(/unknown format/)
    expect(() => box.open(PLAINTEXT, CONTEXT)).toThrow(/unknown format/)
  })

  it('refuses a value sealed under a master key it does not hold, naming the key id', () => {
    const sealed = new SecretBox([randomBytes(32)]).seal(PLAINTEXT, CONTEXT)
    const keyId = sealed.split('.')[1]!
    expect(() => new SecretBox([randomBytes(32)]).open(sealed, CONTEXT)).toThrow(keyId)
  })

  it('supports master-key rotation: [new, old] opens values sealed by old, seals with new, and flags old values as stale', () => {
    const oldKey = randomBytes(32)
    const newKey = randomBytes(32)
    const before = new SecretBox([oldKey])
    const sealedByOld = before.seal(PLAINTEXT, CONTEXT)
    expect(before.isStale(sealedByOld)).toBe(false)

    const rotated = new SecretBox([newKey, oldKey])
    expect(rotated.open(sealedByOld, CONTEXT)).toBe(PLAINTEXT)
    expect(rotated.isStale(sealedByOld)).toBe(true)

    const sealedByNew = rotated.seal(PLAINTEXT, CONTEXT)
    expect(sealedByNew.split('.')[1]).not.toBe(sealedByOld.split('.')[1])
    expect(rotated.isStale(sealedByNew)).toBe(false)
    // Once the old key is dropped, its values no longer open; new ones still do.
    const afterDrop = new SecretBox([newKey])
    expect(afterDrop.open(sealedByNew, CONTEXT)).toBe(PLAINTEXT)
    expect(() => afterDrop.open(sealedByOld, CONTEXT)).toThrow()
    // The box that only knows the old key can't open what the new key sealed.
    expect(() => before.open(sealedByNew, CONTEXT)).toThrow()
  })

  it('derives the same secret for a context again, another for another context or key, and recognises it after a rotation', () => {
    const oldKey = randomBytes(32)
    const newKey = randomBytes(32)
    const [derived] = new SecretBox([oldKey]).derive(CONTEXT)
    expect(derived).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(new SecretBox([oldKey]).derive(CONTEXT)).toEqual([derived])
    expect(new SecretBox([oldKey]).derive('signing_keys:acct_A:key_B')[0]).not.toBe(derived)
    const rotated = new SecretBox([newKey, oldKey]).derive(CONTEXT)
    expect(rotated).toHaveLength(2)
    expect(rotated[0]).not.toBe(derived)
    expect(rotated[1]).toBe(derived)
    // Not the HMAC under the master key itself: derived secrets and sealed values use keys of their own.
    expect(derived).not.toBe(createHmac('sha256', oldKey).update(CONTEXT).digest('base64url'))
  })

  it('reads HERALD_SECRET_KEY text: base64 or hex, comma-separated with spaces, first one sealing', () => {
    const oldKey = randomBytes(32)
    const newKey = randomBytes(32)
    const sealedByOld = new SecretBox([oldKey]).seal(PLAINTEXT, CONTEXT)
    const box = SecretBox.fromSecretKeyText(`${newKey.toString('hex')} , ${oldKey.toString('base64')}`)
    expect(box.open(sealedByOld, CONTEXT)).toBe(PLAINTEXT)
    const sealedByNew = box.seal(PLAINTEXT, CONTEXT)
    expect(new SecretBox([newKey]).open(sealedByNew, CONTEXT)).toBe(PLAINTEXT)
  })

  it('decodes only 32-byte master keys, and generates 32-byte base64 keys', () => {
    const generated = generateMasterKeyText()
    expect(Buffer.from(generated, 'base64')).toHaveLength(32)
    expect(decodeMasterKey(generated)).toEqual(Buffer.from(generated, 'base64'))
    expect(generateMasterKeyText()).not.toBe(generated)
    expect(() => decodeMasterKey(randomBytes(16).toString('base64'))).toThrow(/32 bytes/)
    expect(() => decodeMasterKey('a'.repeat(62))).toThrow(/32 bytes/)
    expect(() => new SecretBox([])).toThrow()
  })
})
