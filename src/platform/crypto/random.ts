import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

/** An unguessable token: `bytes` random bytes as base64url (32 bytes = 256 bits by default). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url')
}

export function sha256(value: string | Buffer): Buffer {
  return createHash('sha256').update(value).digest()
}

/**
 * Compares two secrets in constant time. Hashing first gives both sides the same length, so neither the
 * content nor the length of the expected value leaks through timing.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b))
}
