import { describe, expect, it } from 'vitest'
import { documentMetadata } from './document-metadata.js'

const URL = 'https://app.example/client.json'
const KNOWN = new Set(['openid', 'profile', 'email', 'offline_access', 'notes:read'])
const valid = { client_id: URL, client_name: 'Notes', redirect_uris: ['https://app.example/callback'], logo_uri: 'https://app.example/logo.png' }

function read(document: unknown, policy = {}) {
  return documentMetadata(URL, JSON.stringify(document), KNOWN, policy)
}

function refusal(document: unknown): string {
  return refusalOfText(JSON.stringify(document))
}

describe('a client metadata document (draft-ietf-oauth-client-id-metadata-document §4.1)', () => {
  it('makes a public code-flow client, with the OpenID Connect scopes unless it names its own', () => {
    const metadata = read(valid)
    expect(metadata).toMatchObject({
      client_name: 'Notes',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      scope: 'openid profile email offline_access',
      require_pkce: true,
      skip_consent: false,
      logo_uri: 'https://app.example/logo.png',
    })
    expect(read({ ...valid, scope: 'openid notes:read' }).scope).toBe('openid notes:read')
  })

  it("ignores what only an account decides, and members it doesn't know", () => {
    const metadata = read({ ...valid, skip_consent: true, audience: ['https://api.example'], require_pkce: false, software_id: 'x' })
    expect(metadata).toMatchObject({ skip_consent: false, audience: [], require_pkce: true })
  })

  it('takes private_key_jwt with a jwks_uri', () => {
    const metadata = read({ ...valid, token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://app.example/jwks.json', grant_types: ['authorization_code', 'refresh_token'] })
    expect(metadata).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://app.example/jwks.json' })
  })

  it.each([
    ['not JSON', undefined, 'is not JSON'],
    ['an array', [valid], 'is not a JSON object'],
    ['another client_id', { ...valid, client_id: 'https://evil.example/client.json' }, 'has a client_id that is not its own URL'],
    ['no client_id', { client_name: 'x' }, 'is not valid client metadata: / must have required properties client_id'],
    ['a client_secret', { ...valid, client_secret: 's3cret' }, 'must not contain client_secret'],
    ['a secret expiry', { ...valid, client_secret_expires_at: 0 }, 'must not contain client_secret_expires_at'],
    ['a shared secret method', { ...valid, token_endpoint_auth_method: 'client_secret_basic' }, 'token_endpoint_auth_method must be none or private_key_jwt, not client_secret_basic'],
    ['private_key_jwt without jwks_uri', { ...valid, token_endpoint_auth_method: 'private_key_jwt' }, 'private_key_jwt needs a jwks_uri'],
    ['client_credentials', { ...valid, grant_types: ['client_credentials'] }, 'grant_types may hold only authorization_code and refresh_token, not client_credentials'],
    ['no redirect_uris', { client_id: URL }, 'redirect_uris is required for the authorization_code grant'],
    ['an http redirect_uri', { ...valid, redirect_uris: ['http://app.example/cb'] }, 'must use https unless the host is loopback'],
    ['an unknown scope', { ...valid, scope: 'openid admin' }, 'admin does not exist in this account'],
    ['a reserved scope', { ...valid, scope: 'herald:clients:write' }, 'unknown reserved scope'],
    ['a wrong type', { ...valid, redirect_uris: 'https://app.example/cb' }, '/redirect_uris'],
  ])('refuses %s', (_case, document, reason) => {
    const message = document === undefined ? refusalOfText('{') : refusal(document)
    expect(message).toContain(reason)
  })

  it('takes an http jwks_uri only under the development and test policy', () => {
    const document = { ...valid, token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'http://127.0.0.1:9/jwks' }
    expect(refusal(document)).toContain('jwks_uri must be an https URL')
    expect(read(document, { allowHttpOutbound: true }).jwks_uri).toBe('http://127.0.0.1:9/jwks')
  })
})

function refusalOfText(text: string): string {
  try {
    documentMetadata(URL, text, KNOWN, {})
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
  throw new Error('the document was accepted')
}
