import { describe, expect, it } from 'vitest'
import { type AccessTokenClaims, accessTokenClaimsJson } from './access-token.js'
import { type TokenResponse, tokenResponseJson } from './grants.js'

const claims: AccessTokenClaims = {
  iss: 'https://herald.example/accounts/acct_01jabcdefghijklmnopqrstuvw',
  sub: 'cl_01jabcdefghijklmnopqrstuvwxyz',
  aud: 'https://api.example.com/orders',
  exp: 1763723600,
  iat: 1763720000,
  jti: '0b6c7d1e-8f2a-4b3c-9d4e-5f6a7b8c9d0e',
  client_id: 'cl_01jabcdefghijklmnopqrstuvwxyz',
  scope: 'orders:read herald:scopes:write',
  cv: 1763719999123,
}

describe('accessTokenClaimsJson', () => {
  it.each([
    ['ordinary claims', {}],
    ['a quote and a backslash', { aud: 'https://api.example.com/"a"\\b' }],
    ['control characters', { iss: 'https://a.example/\u0000\n\t\u001f' }],
    ['non-ASCII text and a surrogate pair', { aud: 'https://api.example.com/é€😀' }],
    ['lone surrogates', { sub: 'a\ud800b\udfff' }],
    ['the largest lifetime', { exp: 1763720000 + 86400 }],
  ])('writes what JSON.stringify writes for %s', (_name, changes: Partial<AccessTokenClaims>) => {
    const value = { ...claims, ...changes }
    expect(accessTokenClaimsJson(value)).toBe(JSON.stringify(value))
  })
})

describe('tokenResponseJson', () => {
  it('writes what JSON.stringify writes, every field of the response included', () => {
    // Typed as the whole TokenResponse: a field added to it must be added here, and then to the writer.
    const response: TokenResponse = { access_token: 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJjbGkifQ.c2ln', token_type: 'Bearer', expires_in: 3600, scope: 'orders:read herald:scopes:write' }
    expect(tokenResponseJson(response)).toBe(JSON.stringify(response))
    expect(tokenResponseJson({ ...response, scope: '' })).toBe(JSON.stringify({ ...response, scope: '' }))
  })
})
