import { describe, expect, it } from 'vitest'
import { clientIdUrlProblem, isDocumentClientId } from './client-id-url.js'

describe('a metadata document client_id (draft-ietf-oauth-client-id-metadata-document §3)', () => {
  it('is told from a Herald client id by its scheme', () => {
    expect(isDocumentClientId('https://app.example/client.json')).toBe(true)
    expect(isDocumentClientId('http://127.0.0.1:8080/client.json')).toBe(true)
    expect(isDocumentClientId('cli_01J00000000000000000000000')).toBe(false)
  })

  it('takes an https URL with a path, and a query', () => {
    expect(clientIdUrlProblem('https://app.example/client.json', false)).toBeUndefined()
    expect(clientIdUrlProblem('https://app.example:8443/a/b?v=1', false)).toBeUndefined()
  })

  it.each([
    ['http://app.example/client.json', 'must use https'],
    ['https://app.example', 'must contain a path'],
    ['https://app.example/', 'must contain a path'],
    ['https://app.example/client.json#x', 'must not contain a fragment'],
    ['https://app.example/client.json#', 'must not contain a fragment'],
    ['https://user:pw@app.example/client.json', 'must not contain a username or password'],
    ['https://@app.example/client.json', 'must not contain a username or password'],
    ['https://app.example/a/../client.json', 'must not contain . or .. path segments'],
    ['https://app.example/./client.json', 'must not contain . or .. path segments'],
    ['https://app.example/a/%2E%2e/client.json', 'must not contain . or .. path segments'],
    ['https://APP.example/client.json', 'must be written in normal form (https://app.example/client.json)'],
    ['https://app.example:443/client.json', 'must be written in normal form (https://app.example/client.json)'],
    ['not a url', 'must be an absolute URL'],
    [`https://app.example/${'a'.repeat(2048)}`, 'must be at most 2048 characters'],
  ])('refuses %s', (clientId, reason) => {
    expect(clientIdUrlProblem(clientId, false)).toBe(reason)
  })

  it('takes plain http only under the development and test policy', () => {
    expect(clientIdUrlProblem('http://127.0.0.1:8080/client.json', true)).toBeUndefined()
    expect(clientIdUrlProblem('ftp://127.0.0.1/client.json', true)).toBe('must use https')
  })
})
