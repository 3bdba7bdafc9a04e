import { describe, expect, it } from 'vitest'
import { DEFAULT_METADATA, clientKind, metadataProblems, redirectUriProblem } from './client-metadata.js'

describe('redirectUriProblem', () => {
  it.each([
    ['https://app.example/callback', false],
    ['http://127.0.0.1:8080/cb', false],
    ['http://127.0.0.1:1/cb', false],
    ['http://127.0.0.1:65535/cb', false],
    ['http://[::1]:8080/cb', true],
    ['http://[::1]/cb', false],
    ['http://localhost/cb', false],
    ['com.example.app:/oauth', true],
  ])('accepts %s (native: %s)', (uri, native) => {
    expect(redirectUriProblem(uri, native)).toBeUndefined()
  })

  it.each([
    ['/relative', true, 'absolute'],
    ['https://app.example/cb#x', false, 'fragment'],
    ['http://app.example/cb', false, 'https'],
    ['com.example.app:/oauth', false, 'native'],
    ['myapp:/oauth', true, 'reverse domain'],
    ['javascript:alert(1)', true, 'reverse domain'],
    ['http://127.0.0.1:0/cb', true, 'port between 1 and 65535'],
    ['http://127.0.0.1:65536/cb', true, 'port between 1 and 65535'],
    ['http://127.0.0.1:99999/cb', true, 'port between 1 and 65535'],
    ['http://127.0.0.1:-1/cb', true, 'port between 1 and 65535'],
    ['http://[::1]:http/cb', true, 'port between 1 and 65535'],
    ['https://app.example:0/cb', false, 'port between 1 and 65535'],
    ['https://user:pass@app.example/cb', false, 'credentials'],
    ['https://user@app.example/cb', false, 'credentials'],
    ['http://user:pass@127.0.0.1:8080/cb', true, 'credentials'],
    ['https://*.app.example/cb', false, 'wildcard'],
    ['https://app.*/cb', false, 'wildcard'],
    ['https://%2A.app.example/cb', false, 'wildcard'],
  ])('refuses %s (native: %s)', (uri, native, reason) => {
    expect(redirectUriProblem(uri, native)).toContain(reason)
  })
})

describe('metadataProblems', () => {
  const known = new Set(['orders:read', 'herald:keys:write'])
  const pointers = (metadata: Partial<typeof DEFAULT_METADATA>) =>
    metadataProblems({ ...DEFAULT_METADATA, ...metadata }, known).map((problem) => problem.pointer)

  it('accepts a machine client with known scopes', () => {
    expect(pointers({ grant_types: ['client_credentials'], scope: 'orders:read' })).toEqual([])
  })

  it('requires redirect URIs and the code response type with authorization_code', () => {
    expect(pointers({ grant_types: ['authorization_code'] })).toEqual(['/body/redirect_uris', '/body/response_types'])
  })

  it('keeps management clients to client_credentials and names unknown scopes', () => {
    expect(pointers({ grant_types: ['client_credentials'], scope: 'herald:keys:write herald:nope orders:write' })).toEqual([
      '/body/scope',
      '/body/scope',
    ])
    expect(
      pointers({ grant_types: ['authorization_code'], response_types: ['code'], redirect_uris: ['https://a.example/cb'], scope: 'herald:keys:write' }),
    ).toEqual(['/body/grant_types'])
    expect(clientKind({ scope: 'orders:read herald:keys:write' })).toBe('management')
    expect(clientKind({ scope: 'orders:read' })).toBe('standard')
  })

  it('refuses private key material, mixed jwks sources and non-origin CORS entries', () => {
    expect(
      pointers({
        grant_types: ['client_credentials'],
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [{ kty: 'EC', d: 'secret' } as { kty: string }] },
        jwks_uri: 'https://a.example/jwks',
        allowed_cors_origins: ['https://a.example/path'],
      }),
    ).toEqual(['/body/jwks_uri', '/body/jwks/keys/0', '/body/allowed_cors_origins/0'])
  })
})
