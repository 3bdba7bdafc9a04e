import { describe, expect, it } from 'vitest'
import { MAX_DELEGATION_DEPTH } from '../../platform/access-tokens/access-token-verifier.js'
import { DEFAULT_METADATA } from '../clients/client-metadata.js'
import type { RegisteredClient } from '../clients/client-store.js'
import { ACCESS_TOKEN_TYPE, type ExchangeSubject, actorClaim, checkDepth, checkMayAct, exchangedFrom, exchangedScopes } from './delegation-policy.js'

function client(scopes: string[], impersonation = false): RegisteredClient {
  const partial: Partial<RegisteredClient> = { id: 'cli_gateway', kind: 'standard', scopes, metadata: { ...DEFAULT_METADATA, token_exchange_impersonation: impersonation } }
  return partial as RegisteredClient
}

const subject: ExchangeSubject = {
  tokenType: ACCESS_TOKEN_TYPE,
  subject: 'user-1',
  exp: 2_000_000_000,
  scopes: ['orders:read', 'orders:write'],
  jti: 'jti-2',
  grantId: 'flow_1',
  act: { sub: 'cli_first' },
  sjti: ['jti-1'],
  mayAct: undefined,
}

describe('actorClaim', () => {
  it("names the client and nests the subject's act under it", () => {
    expect(actorClaim(client([]), 'cli_gateway', subject)).toEqual({ sub: 'cli_gateway', act: { sub: 'cli_first' } })
    expect(actorClaim(client([]), 'cli_gateway', { ...subject, act: undefined })).toEqual({ sub: 'cli_gateway' })
  })

  it("names an actor token's subject with the client beside it", () => {
    expect(actorClaim(client([]), 'admin-7', { ...subject, act: undefined })).toEqual({ sub: 'admin-7', client_id: 'cli_gateway' })
  })

  it('is absent for a client registered for impersonation', () => {
    expect(actorClaim(client([], true), 'cli_gateway', subject)).toBeUndefined()
  })
})

describe('exchangedFrom and checkDepth', () => {
  it('lists the subject token first, then what it was exchanged from', () => {
    expect(exchangedFrom(subject)).toEqual(['jti-2', 'jti-1'])
    expect(exchangedFrom({ ...subject, jti: undefined, sjti: [] })).toEqual([])
  })

  it('refuses chains deeper than a token may carry', () => {
    const ids = (count: number) => Array.from({ length: count }, (_, index) => `jti-${index}`)
    let act = { sub: 'a0' }
    for (let depth = 1; depth < MAX_DELEGATION_DEPTH; depth++) act = { sub: `a${depth}`, act } as typeof act
    expect(() => checkDepth(act, ids(MAX_DELEGATION_DEPTH))).not.toThrow()
    expect(() => checkDepth(act, ids(MAX_DELEGATION_DEPTH + 1))).toThrow('exchanged too many times')
    expect(() => checkDepth({ sub: 'top', act } as typeof act, [])).toThrow('exchanged too many times')
  })
})

describe('checkMayAct (RFC 8693 §4.4)', () => {
  it('lets anyone act without may_act, and only the named party with it', () => {
    expect(() => checkMayAct(undefined, 'cli_gateway', client([]))).not.toThrow()
    expect(() => checkMayAct({ sub: 'cli_gateway' }, 'cli_gateway', client([]))).not.toThrow()
    expect(() => checkMayAct({ client_id: 'cli_gateway' }, 'admin-7', client([]))).not.toThrow()
    expect(() => checkMayAct({ sub: 'admin-7', client_id: 'cli_gateway' }, 'admin-7', client([]))).not.toThrow()
  })

  it.each([[{ sub: 'someone-else' }], [{ client_id: 'cli_other' }], [{ sub: 'cli_gateway', client_id: 'cli_other' }], [{}], [{ iss: 'x' }], ['cli_gateway'], [null], [{ sub: 7 }]])(
    'refuses %j, which does not name this actor',
    (mayAct) => {
      expect(() => checkMayAct(mayAct, 'cli_gateway', client([]))).toThrow(expect.objectContaining({ code: 'invalid_request' }))
    },
  )
})

describe('exchangedScopes', () => {
  it("grants what the subject and the client have in common when none is asked", () => {
    expect(exchangedScopes(client(['orders:read', 'billing:read']), subject.scopes, undefined)).toEqual(['orders:read'])
    expect(exchangedScopes(client(['billing:read']), subject.scopes, ' ')).toEqual([])
  })

  it("refuses a scope beyond the subject's or the client's", () => {
    expect(exchangedScopes(client(['orders:read', 'billing:read']), subject.scopes, 'orders:read')).toEqual(['orders:read'])
    expect(() => exchangedScopes(client(['orders:read', 'billing:read']), subject.scopes, 'billing:read')).toThrow('does not carry: billing:read')
    expect(() => exchangedScopes(client(['orders:read']), subject.scopes, 'orders:write')).toThrow(expect.objectContaining({ code: 'invalid_scope' }))
  })

  it("leaves only the client's ceiling for an ID token, which carries no scope", () => {
    expect(exchangedScopes(client(['openid', 'orders:read']), undefined, undefined)).toEqual(['openid', 'orders:read'])
  })
})
