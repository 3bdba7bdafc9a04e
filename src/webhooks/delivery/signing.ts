import { createHmac, randomBytes } from 'node:crypto'
import { decodedToKeep } from '../../platform/crypto/random.js'

/** Standard Webhooks secrets: `whsec_` and the base64 of the key bytes. */
export const SECRET_PREFIX = 'whsec_'
export const SECRET_BYTES = { minimum: 24, maximum: 64, generated: 32 } as const

export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES.generated).toString('base64')
}

/** The key bytes of a well-formed secret, or undefined when `secret` isn't one. */
export function secretKey(secret: string): Buffer | undefined {
  if (!secret.startsWith(SECRET_PREFIX)) return undefined
  const text = secret.slice(SECRET_PREFIX.length)
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || text.length % 4 !== 0) return undefined
  // EndpointStore caches it (see decodedToKeep).
  const key = decodedToKeep(text, 'base64')
  return key.length >= SECRET_BYTES.minimum && key.length <= SECRET_BYTES.maximum ? key : undefined
}

/**
 * The `webhook-signature` header value (Standard Webhooks): `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`,
 * one space-separated entry per key, so a receiver holding either secret during a rotation can verify.
 */
export function signatureHeader(keys: readonly Buffer[], messageId: string, timestampSeconds: number, body: string): string {
  const signed = `${messageId}.${timestampSeconds}.${body}`
  return keys.map((key) => `v1,${createHmac('sha256', key).update(signed).digest('base64')}`).join(' ')
}
