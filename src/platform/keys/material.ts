import {
  type KeyObject,
  createPrivateKey,
  createPublicKey,
  generateKeyPair,
  sign,
} from 'node:crypto'
import { availableParallelism } from 'node:os'
import { promisify } from 'node:util'
import { derToJose } from 'ecdsa-sig-formatter'
import type { JWK } from 'jose'
import pLimit from 'p-limit'
import type { SigningAlg } from '../storage/schema.js'

export interface GeneratedKey {
  publicJwk: JWK
  /** PKCS#8 PEM, to be sealed before it is stored. */
  privatePem: string
}

const generatePair = promisify(generateKeyPair)

/**
 * Key generations running at once: half the cores. Each holds a core and a thread of libuv's pool (four by
 * default, shared with DNS lookups and file access), so a burst of account creations queues here instead of
 * starving the event loop and the pool.
 */
const generation = pLimit(Math.max(1, Math.floor(availableParallelism() / 2)))

/**
 * A new key pair: P-256 for ES256, 2048-bit RSA for RS256 (RFC 7518 §3.3's minimum). Generated off the event loop:
 * an RSA key takes tens to hundreds of milliseconds of CPU, which would stall every other request of the process.
 */
export async function generateSigningKey(kid: string, alg: SigningAlg): Promise<GeneratedKey> {
  const { publicKey, privateKey } =
    alg === 'ES256' ? await generatePair('ec', { namedCurve: 'P-256' }) : await generation(() => generatePair('rsa', { modulusLength: 2048 }))
  const publicJwk: JWK = { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' }
  return { publicJwk, privatePem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString() }
}

export function importPrivateKey(pem: string): KeyObject {
  return createPrivateKey({ key: pem, format: 'pem' })
}

/** Whether `privateKey` is the private half of `publicJwk`: a mismatch would sign tokens no verifier can check. */
export function isPairOf(privateKey: KeyObject, publicJwk: JWK): boolean {
  const derived = createPublicKey(privateKey).export({ format: 'jwk' })
  if (derived.kty !== publicJwk.kty) return false
  return derived.kty === 'EC' ? derived.crv === publicJwk.crv && derived.x === publicJwk.x && derived.y === publicJwk.y : derived.n === publicJwk.n && derived.e === publicJwk.e
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
