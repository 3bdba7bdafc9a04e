import { describe, expect, it } from 'vitest'
import { KeyMaterials } from './key-material.js'
import { generateSigningKey } from './material.js'

describe('KeyMaterials', () => {
  it('opens a key when first read and when first used, then reuses it while its row is unchanged; a changed row is opened afresh', async () => {
    const { publicJwk, privatePem } = await generateSigningKey('key_1', 'ES256')
    let opened = 0
    const materials = new KeyMaterials(10, (row) => {
      opened++
      return row.private_key === 'sealed' ? privatePem : 'not a key'
    })
    const row = { account_id: 'acct_1', id: 'key_1', private_key: 'sealed', public_jwk: JSON.stringify(publicJwk) }
    const first = materials.of(row)
    expect(opened).toBe(1)
    const privateKey = first.privateKey
    expect(opened).toBe(2)
    expect(materials.of({ ...row })).toBe(first)
    expect(materials.of({ ...row }).privateKey).toBe(privateKey)
    expect(opened).toBe(2)

    const swapped = materials.of({ ...row, private_key: 'sealed elsewhere' })
    expect(swapped).not.toBe(first)
    expect(opened).toBe(3)
    expect(() => swapped.privateKey).toThrow()
  })

  it('imports neither half of a key until something signs or verifies with it', async () => {
    const { publicJwk, privatePem } = await generateSigningKey('key_2', 'RS256')
    const material = new KeyMaterials(10, () => privatePem).of({ account_id: 'acct_1', id: 'key_2', private_key: 'x', public_jwk: JSON.stringify(publicJwk) })
    expect(material.publicJwk.kid).toBe('key_2')
    expect(material.publicKey.asymmetricKeyType).toBe('rsa')
    expect(material.privateKey.type).toBe('private')
  })

  it('refuses, when first read, a key its opener refuses', () => {
    const materials = new KeyMaterials(10, () => {
      throw new Error('sealed for another row')
    })
    expect(() => materials.of({ account_id: 'acct_1', id: 'key_4', private_key: 'x', public_jwk: '{}' })).toThrow('sealed for another row')
  })

  it('keeps at most its bound of keys', async () => {
    const { publicJwk, privatePem } = await generateSigningKey('key_3', 'ES256')
    const materials = new KeyMaterials(2, () => privatePem)
    for (const id of ['a', 'b', 'c']) materials.of({ account_id: 'acct_1', id, private_key: 'x', public_jwk: JSON.stringify(publicJwk) })
    expect(materials.size).toBe(2)
  })
})
