import { describe, expect, it } from 'vitest'
import { claimsForScopes } from './scope-claims.js'

describe('claimsForScopes', () => {
  const consent = { email: 'ada@example.com', email_verified: true, name: 'Ada', phone_number: '+1', tenant: 'acme' }

  it("keeps a standard claim only with its scope (OpenID Connect Core §5.4), and the consent app's own claims always", () => {
    expect(claimsForScopes(consent, ['openid'])).toEqual({ tenant: 'acme' })
    expect(claimsForScopes(consent, ['openid', 'email'])).toEqual({ email: 'ada@example.com', email_verified: true, tenant: 'acme' })
    expect(claimsForScopes(consent, ['openid', 'profile', 'phone'])).toEqual({ name: 'Ada', phone_number: '+1', tenant: 'acme' })
  })
})
