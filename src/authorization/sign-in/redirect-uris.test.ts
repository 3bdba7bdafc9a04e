import { describe, expect, it } from 'vitest'
import { redirectUriMatches, redirectUriSyntaxProblem } from './redirect-uris.js'

describe('redirectUriMatches', () => {
  it.each([
    ['https://rp.example/cb', 'https://rp.example/cb', false],
    ['http://127.0.0.1/cb', 'http://127.0.0.1/cb', false],
    ['http://127.0.0.1:9/cb', 'http://127.0.0.1:9/cb', false],
    ['http://127.0.0.1/cb', 'http://127.0.0.1:53127/cb', true],
    ['http://127.0.0.1:9/cb?x=1', 'http://127.0.0.1:65535/cb?x=1', true],
    ['http://127.0.0.1:9/cb', 'http://127.0.0.1:1/cb', true],
    ['http://[::1]:9/cb', 'http://[::1]:8080/cb', true],
    ['http://127.0.0.1:9', 'http://127.0.0.1', true],
  ])('matches %s with %s (native: %s)', (registered, presented, native) => {
    expect(redirectUriMatches(registered, presented, native)).toBe(true)
  })

  it.each([
    ['a web client may not vary the loopback port', 'http://127.0.0.1/cb', 'http://127.0.0.1:53127/cb', false],
    ['a web client may not vary the IPv6 loopback port', 'http://[::1]:9/cb', 'http://[::1]:10/cb', false],
    ['localhost gets no port freedom (RFC 8252 §8.3)', 'http://localhost:9/cb', 'http://localhost:10/cb', true],
    ['port 0', 'http://127.0.0.1:9/cb', 'http://127.0.0.1:0/cb', true],
    ['port 65536', 'http://127.0.0.1:9/cb', 'http://127.0.0.1:65536/cb', true],
    ['port 99999', 'http://127.0.0.1:9/cb', 'http://127.0.0.1:99999/cb', true],
    ['another loopback address', 'http://127.0.0.1:9/cb', 'http://[::1]:9/cb', true],
    ['another path', 'http://127.0.0.1:9/cb', 'http://127.0.0.1:10/cb/', true],
    ['a port on a non-loopback host', 'https://rp.example/cb', 'https://rp.example:8443/cb', true],
    ['credentials before a loopback host', 'http://127.0.0.1:9/cb', 'http://a@127.0.0.1:9/cb', true],
  ])('refuses %s', (_name, registered, presented, native) => {
    expect(redirectUriMatches(registered, presented, native)).toBe(false)
  })
})

describe('redirectUriSyntaxProblem', () => {
  it.each(['https://rp.example/cb', 'http://127.0.0.1:1/cb', 'http://[::1]:65535/cb', 'http://127.0.0.1:/cb', 'com.example.app:/cb'])('accepts %s', (uri) => {
    expect(redirectUriSyntaxProblem(uri)).toBeUndefined()
  })

  it.each([
    ['http://127.0.0.1:0/cb', 'port'],
    ['http://127.0.0.1:99999/cb', 'port'],
    ['http://127.0.0.1:1e3/cb', 'port'],
    ['https://a:b@rp.example:70000/cb', 'port'],
    ['/cb', 'absolute'],
    ['http:127.0.0.1:0/cb', 'scheme://host'],
    ['http:/127.0.0.1:9/cb', 'scheme://host'],
    ['http:\\\\127.0.0.1:9\\cb', 'scheme://host'],
    ['HTTP://127.0.0.1:0/cb', 'port'],
    ['https://a:b@rp.example/cb', 'credentials'],
    ['https://*.rp.example/cb', 'wildcard'],
  ])('refuses %s', (uri, reason) => {
    expect(redirectUriSyntaxProblem(uri)).toContain(reason)
  })
})
