import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import { generateSecret, secretKey, signatureHeader } from './signing.js'

describe('Standard Webhooks signing', () => {
  it("matches the specification's known answer", () => {
    const key = secretKey('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')
    expect(key).toBeDefined()
    expect(signatureHeader([key!], 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    )
  })

  it('signs with every key during a rotation, each verifiable on its own', () => {
    const [oldSecret, newSecret] = [generateSecret(), generateSecret()]
    const body = '{"type":"a.b","timestamp":"2026-01-01T00:00:00.000Z","data":{}}'
    const timestamp = Math.floor(Date.now() / 1000)
    const header = signatureHeader([secretKey(newSecret)!, secretKey(oldSecret)!], 'evt_1', timestamp, body)
    expect(header.split(' ')).toHaveLength(2)
    const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(timestamp), 'webhook-signature': header }
    for (const secret of [oldSecret, newSecret]) expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body))
    expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow()
  })

  it('accepts only whsec_ secrets of 24 to 64 bytes', () => {
    expect(secretKey(generateSecret())).toHaveLength(32)
    expect(secretKey(`whsec_${Buffer.alloc(24).toString('base64')}`)).toHaveLength(24)
    expect(secretKey(`whsec_${Buffer.alloc(23).toString('base64')}`)).toBeUndefined()
    expect(secretKey(`whsec_${Buffer.alloc(65).toString('base64')}`)).toBeUndefined()
    expect(secretKey(Buffer.alloc(32).toString('base64'))).toBeUndefined()
    expect(secretKey('whsec_not base64!')).toBeUndefined()
  })
})
