import { describe, expect, it } from 'vitest'
import { KeyMaterials } from './key-material.js'
import { generateSigningKey } from './material.js'

describe('KeyMaterials', () => {
  it('reads no private key until the key first signs, then reads it once and reuses it while its row is unchanged', async () => {
    const { publicJwk, privatePem } = await generateSigningKey('key_1', 'ES256')
    let reads = 0
    const materials = new KeyMaterials(10, async () => {
      reads++
      return privatePem
    })
    const row = { account_id: 'acct_1', id: 'key_1', alg: 'ES256', public_jwk: JSON.stringify(publicJwk) } as const
    const first = materials.of(row)
    expect(first.signer).toBeUndefined()
    expect(reads).toBe(0)
    const [signer, concurrent] = await Promise.all([first.loadSigner(), first.loadSigner()])
    expect(concurrent).toBe(signer)
    expect(signer.privateKey.type).toBe('private')
    expect(reads).toBe(1)
    expect(materials.of({ ...row })).toBe(first)
    expect(materials.of({ ...row }).signer).toBe(signer)

    // Another account's row under the same id is another key.
    const foreign = materials.of({ ...row, account_id: 'acct_2' })
    expect(foreign).not.toBe(first)
    expect(foreign.signer).toBeUndefined()
  })

  it('tries a refused private key again at the next use, and hands out a new public JWK object each time', async () => {
    const { publicJwk, privatePem } = await generateSigningKey('key_2', 'RS256')
    let refuse = true
    const material = new KeyMaterials(10, async () => {
      if (refuse) throw new Error('sealed for another row')
      return privatePem
    }).of({ account_id: 'acct_1', id: 'key_2', alg: 'RS256', public_jwk: JSON.stringify(publicJwk) })
    await expect(material.loadSigner()).rejects.toThrow('sealed for another row')
    expect(material.signer).toBeUndefined()
    refuse = false
    expect((await material.loadSigner()).privateKey.asymmetricKeyType).toBe('rsa')

    expect(material.publicJwk.kid).toBe('key_2')
    expect(material.publicJwk).not.toBe(material.publicJwk)
  })

  it('keeps at most its bound of keys', async () => {
    const { publicJwk, privatePem } = await generateSigningKey('key_3', 'ES256')
    const materials = new KeyMaterials(2, async () => privatePem)
    for (const id of ['a', 'b', 'c']) materials.of({ account_id: 'acct_1', id, alg: 'ES256', public_jwk: JSON.stringify(publicJwk) })
    expect(materials.size).toBe(2)
  })
})
