import { describe, expect, it } from 'vitest'
import { verifyIdTokenHint } from './id-token-hint.js'
import { KeyMaterials, KeyReadFailure, LoadedKey } from '../../platform/keys/key-material.js'
import { AccountKeys } from '../../platform/keys/account-keys.js'
import type { KeyStore } from '../../platform/keys/key-store.js'
import { generateSigningKey, importPrivateKey, signJwt } from '../../platform/keys/material.js'
import { isDatabaseUnavailable } from '../../platform/storage/unavailable.js'
import { AccessTokenVerifier } from '../../platform/access-tokens/access-token-verifier.js'

/**
 * A key's public half is read from the database when a token first needs it. When that read fails, the token is not
 * bad: the verifiers pass the failure on, so that the request answers as an outage (503), and never call a good token
 * inactive or a good hint no hint.
 */
describe('a public key that cannot be read', () => {
  async function setUp() {
    const { privatePem } = await generateSigningKey('key_1', 'ES256')
    const outage = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })
    const material = new KeyMaterials(10, {
      publicJwk: () => Promise.reject(outage),
      privateKey: () => Promise.reject(outage),
    }).of({ account_id: 'acct_1', id: 'key_1', alg: 'ES256' })
    const key = new LoadedKey({ kid: 'key_1', alg: 'ES256', signsFrom: 0, retiresAt: null, publishedUntil: null, revokedAt: null }, material)
    // Only keysOf is asked of the store; the set is what a warm cache would hold.
    const keys = { keysOf: () => new AccountKeys([key]) } as unknown as KeyStore
    const signer = { kid: 'key_1', alg: 'ES256' as const, privateKey: importPrivateKey(privatePem) }
    return { keys, signer }
  }

  it('makes the access token verifier fail as the database did, not answer the token inactive', async () => {
    const { keys, signer } = await setUp()
    const verifier = new AccessTokenVerifier(keys, { find: () => ({ credentialsVersion: 0 }) }, { isRevoked: async () => false, isGrantRevoked: async () => false }, { now: () => 1_000_000 }, 10)
    const token = signJwt(signer, 'at+jwt', JSON.stringify({ iss: 'https://issuer', sub: 's', aud: 'https://issuer', exp: 2000, iat: 1000, jti: 'j', client_id: 'c', cv: 0 }))
    const failure = await verifier.verify('acct_1', token, { issuer: 'https://issuer' }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(KeyReadFailure)
    expect(isDatabaseUnavailable(failure)).toBe(true)
  })

  it('makes an id_token_hint fail as the database did, not count as no hint', async () => {
    const { keys, signer } = await setUp()
    const hint = signJwt(signer, 'JWT', JSON.stringify({ iss: 'https://issuer', sub: 's', aud: 'c' }))
    const failure = await verifyIdTokenHint(keys, 'acct_1', 'https://issuer', hint, 1_000_000).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(KeyReadFailure)
    expect(isDatabaseUnavailable(failure)).toBe(true)
  })
})
