import { describe, expect, it } from 'vitest'
import { type KeyReader, KeyMaterials } from './key-material.js'
import { type GeneratedKey, generateSigningKey } from './material.js'

/** A reader of one key pair that counts its reads; `refuse` makes the private read fail as a foreign seal would. */
function countingReader(pair: GeneratedKey, publicPair: GeneratedKey = pair) {
  const reads = { public: 0, private: 0, refuse: false }
  const reader: KeyReader = {
    publicJwk: async () => {
      reads.public++
      return JSON.stringify(publicPair.publicJwk)
    },
    privateKey: async () => {
      reads.private++
      if (reads.refuse) throw new Error('sealed for another row')
      return { privatePem: pair.privatePem, publicJwk: JSON.stringify(publicPair.publicJwk) }
    },
  }
  return { reads, reader }
}

describe('KeyMaterials', () => {
  it('reads neither half until it is needed, then reads it once and reuses it while its row is unchanged', async () => {
    const { reads, reader } = countingReader(await generateSigningKey('key_1', 'ES256'))
    const materials = new KeyMaterials(10, reader)
    const row = { account_id: 'acct_1', id: 'key_1', alg: 'ES256' } as const
    const first = materials.of(row)
    expect(first.signer).toBeUndefined()
    expect(reads).toMatchObject({ public: 0, private: 0 })
    const [signer, concurrent] = await Promise.all([first.loadSigner(), first.loadSigner()])
    expect(concurrent).toBe(signer)
    expect(signer.privateKey.type).toBe('private')
    expect(await first.loadSigner()).toBe(signer)
    expect(reads).toMatchObject({ public: 0, private: 1 })
    expect(materials.of({ ...row })).toBe(first)
    expect(materials.of({ ...row }).signer).toBe(signer)

    // Another account's row under the same id is another key.
    const foreign = materials.of({ ...row, account_id: 'acct_2' })
    expect(foreign).not.toBe(first)
    expect(foreign.signer).toBeUndefined()
  })

  it('tries a refused private key again at the next use, and reads the public JWK once, handing out a new object each time', async () => {
    const { reads, reader } = countingReader(await generateSigningKey('key_2', 'RS256'))
    reads.refuse = true
    const material = new KeyMaterials(10, reader).of({ account_id: 'acct_1', id: 'key_2', alg: 'RS256' })
    await expect(material.loadSigner()).rejects.toThrow('sealed for another row')
    expect(material.signer).toBeUndefined()
    reads.refuse = false
    expect((await material.loadSigner()).privateKey.asymmetricKeyType).toBe('rsa')

    const [jwk, concurrent] = await Promise.all([material.publicJwk(), material.publicJwk()])
    expect(jwk.kid).toBe('key_2')
    expect(concurrent).not.toBe(jwk)
    expect(await material.publicJwk()).toEqual(jwk)
    expect(reads.public).toBe(1)
  })

  it('refuses a private key that is not the half of its public key', async () => {
    const { reader } = countingReader(await generateSigningKey('key_3', 'ES256'), await generateSigningKey('key_3', 'ES256'))
    const material = new KeyMaterials(10, reader).of({ account_id: 'acct_1', id: 'key_3', alg: 'ES256' })
    await expect(material.loadSigner()).rejects.toThrow('is not the one its public key belongs to')
    expect(material.signer).toBeUndefined()
  })

  it('keeps at most its bound of keys', async () => {
    const materials = new KeyMaterials(2, countingReader(await generateSigningKey('key_4', 'ES256')).reader)
    for (const id of ['a', 'b', 'c']) materials.of({ account_id: 'acct_1', id, alg: 'ES256' })
    expect(materials.size).toBe(2)
  })
})
