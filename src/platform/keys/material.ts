import { type KeyObject, createPrivateKey, createPublicKey, sign } from 'node:crypto'
import { availableParallelism } from 'node:os'
import { derToJose } from 'ecdsa-sig-formatter'
import type { JWK } from 'jose'
import type { SigningAlg } from '../storage/schema.js'
import { KeygenThreads } from './keygen-threads.js'

export interface GeneratedKey {
  publicJwk: JWK
  /** PKCS#8 PEM, to be sealed before it is stored. */
  privatePem: string
}

/**
 * Half the cores make keys at once, so a burst of account creations queues here; a thread stays a minute after
 * its last key, so that a burst does not start one per account.
 */
const keygen = new KeygenThreads(Math.max(1, Math.floor(availableParallelism() / 2)), 60_000)

/**
 * A new key pair: P-256 for ES256, 2048-bit RSA for RS256 (RFC 7518 §3.3's minimum), made off the event loop at
 * the lowest CPU priority (KeygenThreads).
 */
export async function generateSigningKey(kid: string, alg: SigningAlg): Promise<GeneratedKey> {
  const { publicJwk, privatePem } = await keygen.generate(alg)
  return { publicJwk: { ...publicJwk, kid, alg, use: 'sig' }, privatePem }
}

export function importPrivateKey(pem: string): KeyObject {
  return createPrivateKey({ key: pem, format: 'pem' })
}

/**
 * Whether `privateKey` is the private half of `publicJwk`: a mismatch would sign tokens no verifier can check.
 * Compared as SPKI DER: exporting a JWK reads an EC key through OpenSSL's legacy EC_KEY interface, which leaves a
 * legacy copy attached to the private key for as long as it is kept, about 2 KB per key.
 */
export function isPairOf(privateKey: KeyObject, publicJwk: JWK): boolean {
  const derived = createPublicKey(privateKey).export({ type: 'spki', format: 'der' })
  const expected = createPublicKey({ key: publicJwk, format: 'jwk' }).export({ type: 'spki', format: 'der' })
  return derived.equals(expected)
}

export interface JwtSigner {
  kid: string
  alg: SigningAlg
  privateKey: KeyObject
}

/**
 * Signs a compact JWS with node:crypto directly: on the token endpoint's hot path this is measurably faster
 * than going through a general JOSE library, and the header is fixed per key and type.
 */
/** By token type, then by key: one map per type (there are few), not one per key (there are many). */
const headers = new Map<string, WeakMap<JwtSigner, string>>()

/** The base64url JOSE header for a key and token type, encoded once per key. */
function encodedHeader(signer: JwtSigner, typ: string): string {
  let byKey = headers.get(typ)
  if (!byKey) headers.set(typ, (byKey = new WeakMap()))
  let header = byKey.get(signer)
  if (header === undefined) {
    header = Buffer.from(JSON.stringify({ alg: signer.alg, kid: signer.kid, typ })).toString('base64url')
    byKey.set(signer, header)
  }
  return header
}

/**
 * A compact JWS of `payloadJson`, the claims already as JSON text. A JWS ES256 signature is the raw r||s pair (RFC
 * 7518 §3.4): OpenSSL answers DER, converted here rather than by node:crypto's `dsaEncoding: 'ieee-p1363'`, which
 * reads the curve's order through OpenSSL's legacy EC_KEY interface and so makes every key keep a second, legacy
 * copy of itself.
 */
export function signJwt(signer: JwtSigner, typ: string, payloadJson: string): string {
  const input = `${encodedHeader(signer, typ)}.${Buffer.from(payloadJson).toString('base64url')}`
  const signature = sign('sha256', Buffer.from(input), signer.privateKey)
  return `${input}.${signer.alg === 'ES256' ? derToJose(signature, 'ES256') : signature.toString('base64url')}`
}
