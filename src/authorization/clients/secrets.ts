import { timingSafeEqual } from 'node:crypto'
import { randomToken, sha256 } from '../../platform/crypto/random.js'

/**
 * Client secrets are 256 random bits made by Herald, never chosen by people. Against such a secret a slow
 * password hash (bcrypt, scrypt, Argon2) adds nothing, since 2^256 guesses are out of reach at any speed,
 * while it would cost milliseconds of CPU on every token request. SHA-256 keeps the stored value useless to a
 * reader of the database and costs a microsecond.
 */
export function newClientSecret(): string {
  return randomToken(32)
}

export function hashClientSecret(secret: string): string {
  return sha256(secret).toString('base64url')
}

/** Constant-time: both sides are 32-byte digests, so nothing about the stored hash leaks through timing. */
export function clientSecretMatches(presented: string, storedHash: string): boolean {
  const stored = Buffer.from(storedHash, 'base64url')
  const actual = sha256(presented)
  return stored.length === actual.length && timingSafeEqual(stored, actual)
}
