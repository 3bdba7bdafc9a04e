import { readFileSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { BUILT_IN_EVENT_TYPES, isReservedType, isValidPattern, matchesPattern } from './event-types.js'

describe('event type patterns', () => {
  it('matches exact names, prefixes at any depth, and everything', () => {
    expect(matchesPattern('oauth.client.created', 'oauth.client.created')).toBe(true)
    expect(matchesPattern('oauth.client.created', 'oauth.client.deleted')).toBe(false)
    expect(matchesPattern('oauth.client.*', 'oauth.client.secret_rotated')).toBe(true)
    expect(matchesPattern('oauth.*', 'oauth.client.created')).toBe(true)
    expect(matchesPattern('oauth.client.*', 'oauth.clients.created')).toBe(false)
    expect(matchesPattern('oauth.client.*', 'oauth.client')).toBe(false)
    expect(matchesPattern('*', 'anything.at.all')).toBe(true)
  })

  it('refuses malformed patterns', () => {
    for (const good of ['*', 'a', 'a.b', 'a.*', 'invoice_v2.paid-late']) expect(isValidPattern(good)).toBe(true)
    for (const bad of ['', '.', 'a.', '.a', 'a..b', '*.a', 'a*', 'a.*.b', 'a b', 'a.**', 'é']) expect(isValidPattern(bad)).toBe(false)
  })
})

describe('reserved types', () => {
  it("refuses Herald's namespaces and the bare names, in any case, and nothing that only begins like them", () => {
    for (const reserved of ['oauth', 'webhook', 'OAuth', 'WEBHOOK', 'oauth.client.created', 'Webhook.ping']) expect(isReservedType(reserved), reserved).toBe(true)
    for (const free of ['oauthx', 'oauth_v2.x', 'webhooks', 'webhook-x', 'my.oauth', 'invoice.paid']) expect(isReservedType(free), free).toBe(false)
  })
})

describe('the event type catalog', () => {
  it('describes every type the source code emits, and nothing else', () => {
    const emitted = new Set<string>()
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name)
        if (entry.isDirectory()) walk(file)
        else if (file.endsWith('.ts') && !file.endsWith('.test.ts') && entry.name !== 'event-types.ts') {
          for (const match of readFileSync(file, 'utf8').matchAll(/'((?:oauth|webhook)(?:\.[a-z_]+)+)'/g)) emitted.add(match[1]!)
        }
      }
    }
    walk(path.resolve(import.meta.dirname, '../..'))
    const catalog = new Set(BUILT_IN_EVENT_TYPES.map((type) => type.name))
    expect([...emitted].sort()).toEqual([...catalog].sort())
  })
})
