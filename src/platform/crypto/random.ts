import { hash, randomBytes, timingSafeEqual } from 'node:crypto'

/** An unguessable token: `bytes` random bytes as base64url (32 bytes = 256 bits by default). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url')
}

/** One-shot: a Hash object per call costs more than the digest of a short value (it runs per token request). */
export function sha256(value: string | Buffer): Buffer {
  return hash('sha256', value, 'buffer')
}

/**
 * Compares two secrets in constant time. Hashing first gives both sides the same length, so neither the
 * content nor the length of the expected value leaks through timing.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b))
}

/**
 * `encoded` decoded into bytes of their own, for values a cache keeps. Buffer.from carves a short value out of a
 * shared 8 KiB pool, and one kept slice keeps its whole pool alive: a cache of ten thousand 32-byte digests held
 * tens of megabytes that way.
 */
export function decodedToKeep(encoded: string, encoding: 'base64' | 'base64url'): Buffer {
  const pooled = Buffer.from(encoded, encoding)
  const own = Buffer.alloc(pooled.length)
  pooled.copy(own)
  return own
}
