import { describe, expect, it } from 'vitest'
import { DEFAULT_METADATA } from '../clients/client-metadata.js'
import { narrowedCeiling, registrationCeiling, registrationMetadata, registrationPolicyProblems } from './registration-policy.js'

const POLICY = {
  registration_scope: 'openid profile herald:clients:write orders:read',
  registration_grant_types: ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:token-exchange'] as const,
}

describe('registrationCeiling', () => {
  it('never passes herald: scopes, and never client_credentials or token exchange to an anonymous open registration', () => {
    expect(registrationCeiling({ ...POLICY, registration_grant_types: [...POLICY.registration_grant_types] }, 'open')).toEqual({
      scopes: ['openid', 'profile', 'orders:read'],
      grantTypes: ['authorization_code', 'refresh_token'],
    })
    expect(registrationCeiling({ ...POLICY, registration_grant_types: [...POLICY.registration_grant_types] }, 'initial_access_token').grantTypes).toContain('client_credentials')
  })

  it("narrows the policy to an initial access token's limits, which can't widen it", () => {
    const ceiling = registrationCeiling({ ...POLICY, registration_grant_types: [...POLICY.registration_grant_types] }, 'open', { scope: 'openid email', grantTypes: ['client_credentials', 'urn:ietf:params:oauth:grant-type:device_code'] })
    expect(ceiling).toEqual({ scopes: ['openid'], grantTypes: ['client_credentials'] })
  })

  it('meets two ceilings in what both allow', () => {
    expect(narrowedCeiling({ scopes: ['a', 'b'], grantTypes: ['authorization_code', 'refresh_token'] }, { scopes: ['b', 'c'], grantTypes: ['authorization_code'] })).toEqual({
      scopes: ['b'],
      grantTypes: ['authorization_code'],
    })
  })
})

describe('registrationMetadata', () => {
  const ceiling = { scopes: ['openid', 'orders:read'], grantTypes: ['authorization_code' as const] }

  it("gives what a registration leaves out RFC 7591's defaults, and the ceiling's scopes", () => {
    expect(registrationMetadata({ redirect_uris: ['https://a.example/cb'] }, ceiling)).toMatchObject({ grant_types: ['authorization_code'], response_types: ['code'], scope: 'openid orders:read' })
    expect(registrationMetadata({ grant_types: ['client_credentials'] }, ceiling)).toMatchObject({ response_types: [], token_endpoint_auth_method: 'client_secret_basic' })
    expect(registrationMetadata({ scope: 'openid', response_types: ['code'] }, ceiling).scope).toBe('openid')
  })
})

describe('registrationPolicyProblems', () => {
  const ceiling = { scopes: ['openid'], grantTypes: ['authorization_code' as const] }
  const metadata = { ...DEFAULT_METADATA, redirect_uris: ['https://a.example/cb'], response_types: ['code' as const], scope: 'openid' }

  it('accepts what stays within the ceiling', () => {
    expect(registrationPolicyProblems(metadata, ceiling)).toEqual([])
    expect(registrationPolicyProblems({ ...metadata, redirect_uris: ['http://127.0.0.1:8080/cb'] }, ceiling)).toEqual([])
  })

  it('points at each field beyond it', () => {
    const pointers = (changes: Partial<typeof metadata>) => registrationPolicyProblems({ ...metadata, ...changes }, ceiling).map((problem) => problem.pointer)
    expect(pointers({ scope: 'openid herald:login orders:write' })).toEqual(['/body/scope', '/body/scope'])
    expect(pointers({ grant_types: ['authorization_code', 'refresh_token'] })).toEqual(['/body/grant_types'])
    expect(pointers({ redirect_uris: ['https://a.example/cb', 'http://a.example/cb', 'com.example.app:/cb'] })).toEqual(['/body/redirect_uris/1', '/body/redirect_uris/2'])
    expect(pointers({ post_logout_redirect_uris: ['http://a.example/bye'] })).toEqual(['/body/post_logout_redirect_uris/0'])
    expect(pointers({ skip_consent: true, audience: ['https://api.example'], token_exchange_impersonation: true })).toEqual(['/body/skip_consent', '/body/audience', '/body/token_exchange_impersonation'])
  })
})
