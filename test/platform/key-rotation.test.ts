import { type JWK, type JWTVerifyGetKey, createLocalJWKSet, createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import { describe, expect, it } from 'vitest'
import { JWKS_MAX_AGE_SECONDS } from '../../src/platform/keys/policy.js'
import { DEFAULT_SETTINGS, longestSignedTokenLifetime } from '../../src/platform/settings/settings.js'
import { type CreatedAccount, type TestHerald, forEachDialect, useHerald } from '../support/herald.js'
import { basicAuth, call, createAccount, managementToken } from '../support/http.js'

const MAX_AGE_MS = JWKS_MAX_AGE_SECONDS * 1000
const LONGEST_MS = longestSignedTokenLifetime(DEFAULT_SETTINGS) * 1000

interface KeyView {
  kid: string
  alg: 'ES256' | 'RS256'
  status: string
  created_at: string
  signs_from: string
  retires_at: string | null
  published_until: string | null
  revoked_at: string | null
}

forEachDialect((dialect) => {
  const h = useHerald(dialect)

  /** The JWKS as a verifier fetching it now would see it (a fresh fetch: no cache carried between points in time). */
  async function jwks(account: CreatedAccount): Promise<{ kids: string[]; keys: JWK[]; verifier: JWTVerifyGetKey }> {
    const response = await call<{ keys: JWK[] }>(`${account.base}/.well-known/jwks.json`, 'GET')
    expect(response.status).toBe(200)
    return { kids: response.body.keys.map((key) => key.kid as string), keys: response.body.keys, verifier: createLocalJWKSet(response.body) }
  }

  async function verify(herald: TestHerald, account: CreatedAccount, token: string, keySet: JWTVerifyGetKey) {
    return jwtVerify(token, keySet, {
      issuer: account.issuer,
      audience: account.issuer,
      typ: 'at+jwt',
      currentDate: new Date(herald.clock.now()),
    })
  }

  const kidOf = (token: string) => decodeProtectedHeader(token).kid as string

  async function rotate(account: CreatedAccount): Promise<KeyView[]> {
    const token = await managementToken(account, 'herald:keys:write')
    const response = await call<{ data: KeyView[] }>(`${account.base}/keys/rotate`, 'POST', { token })
    expect(response.status).toBe(200)
    return response.body.data
  }

  async function listKeys(account: CreatedAccount): Promise<KeyView[]> {
    const token = await managementToken(account, 'herald:keys:write')
    const response = await call<{ data: KeyView[] }>(`${account.base}/keys`, 'GET', { token })
    expect(response.status).toBe(200)
    return response.body.data
  }

  const byAlg = (keys: readonly KeyView[], alg: KeyView['alg'], status: string) => keys.filter((key) => key.alg === alg && key.status === status)

  describe('routine key rotation', () => {
    it('keeps a token signed before the rotation verifiable through the JWKS afterwards, and usable on the management API', async () => {
      const account = await createAccount(h.current)
      const before = await managementToken(account, 'herald:keys:write')
      const oldKid = kidOf(before)

      const created = await rotate(account)
      expect(created.map((key) => key.kid)).not.toContain(oldKid)

      // Right after rotation, with jose's own remote key set (fresh, so it fetches now).
      const remote = createRemoteJWKSet(new URL(`${account.base}/.well-known/jwks.json`))
      const { protectedHeader } = await verify(h.current, account, before, remote)
      expect(protectedHeader.kid).toBe(oldKid)

      // After the handover, the old key no longer signs but still verifies its tokens.
      h.current.clock.advance(MAX_AGE_MS + 1000)
      const later = await jwks(account)
      expect(later.kids).toContain(oldKid)
      await expect(verify(h.current, account, before, later.verifier)).resolves.toMatchObject({ protectedHeader: { kid: oldKid } })
      const keys = await call(`${account.base}/keys`, 'GET', { token: before })
      expect(keys.status).toBe(200)
    })

    it('publishes the new keys at once, signs with them only after the JWKS max-age, and unpublishes the old ones after their last token expired', async () => {
      const account = await createAccount(h.current)
      const t0 = h.current.clock.now()
      const initial = await jwks(account)
      expect(initial.keys.map((key) => key.alg).sort()).toEqual(['ES256', 'RS256'])
      const oldEs = initial.keys.find((key) => key.alg === 'ES256')?.kid as string
      const oldRs = initial.keys.find((key) => key.alg === 'RS256')?.kid as string

      const created = await rotate(account)
      expect(created.map((key) => key.alg).sort()).toEqual(['ES256', 'RS256'])
      const newEs = created.find((key) => key.alg === 'ES256')!
      const newRs = created.find((key) => key.alg === 'RS256')!
      for (const key of created) {
        expect(key.status).toBe('upcoming')
        expect(Date.parse(key.signs_from)).toBe(t0 + MAX_AGE_MS)
      }

      // Published at once, both algorithms, next to the old keys; the JWKS says how long it may be cached.
      const response = await call(`${account.base}/.well-known/jwks.json`, 'GET')
      expect(response.headers.get('cache-control')).toContain(`max-age=${JWKS_MAX_AGE_SECONDS}`)
      const published = await jwks(account)
      expect(published.kids.sort()).toEqual([oldEs, oldRs, newEs.kid, newRs.kid].sort())
      for (const key of published.keys) {
        expect(key).not.toHaveProperty('d')
        expect(key).not.toHaveProperty('p')
      }

      // Until every cached JWKS has been refreshed, the old key signs.
      const stillOld = await managementToken(account)
      expect(kidOf(stillOld)).toBe(oldEs)
      h.current.clock.advance(MAX_AGE_MS - 1)
      const lastOld = await managementToken(account)
      expect(kidOf(lastOld)).toBe(oldEs)
      await verify(h.current, account, lastOld, (await jwks(account)).verifier)

      // From signs_from on, new tokens carry the new kid and verify through the JWKS.
      h.current.clock.advance(1)
      const firstNew = await managementToken(account)
      expect(kidOf(firstNew)).toBe(newEs.kid)
      await verify(h.current, account, firstNew, (await jwks(account)).verifier)

      // The old key stays published until the longest token it could have signed has expired...
      const publishedUntil = t0 + MAX_AGE_MS + LONGEST_MS
      h.current.clock.advance(publishedUntil - h.current.clock.now() - 2000)
      const nearEnd = await jwks(account)
      expect(nearEnd.kids).toEqual(expect.arrayContaining([oldEs, oldRs, newEs.kid, newRs.kid]))
      await expect(verify(h.current, account, lastOld, nearEnd.verifier)).resolves.toMatchObject({ protectedHeader: { kid: oldEs } })
      h.current.clock.advance(1999)
      expect((await jwks(account)).kids).toContain(oldEs)

      // ...and leaves the JWKS at published_until.
      h.current.clock.advance(1)
      const after = await jwks(account)
      expect(after.kids.sort()).toEqual([newEs.kid, newRs.kid].sort())
      expect(kidOf(await managementToken(account))).toBe(newEs.kid)
    })

    it('lists the keys as upcoming, signing, retiring and retired as time passes', async () => {
      const account = await createAccount(h.current)
      const first = await listKeys(account)
      expect(first.map((key) => `${key.alg}:${key.status}`).sort()).toEqual(['ES256:signing', 'RS256:signing'])
      for (const key of first) expect(key).toMatchObject({ retires_at: null, published_until: null, revoked_at: null })

      const t0 = h.current.clock.now()
      const created = await rotate(account)
      const afterRotate = await listKeys(account)
      expect(afterRotate).toHaveLength(4)
      for (const alg of ['ES256', 'RS256'] as const) {
        const [old] = byAlg(afterRotate, alg, 'signing')
        const [next] = byAlg(afterRotate, alg, 'upcoming')
        expect(old?.kid).toBe(first.find((key) => key.alg === alg)?.kid)
        expect(next?.kid).toBe(created.find((key) => key.alg === alg)?.kid)
        expect(old?.retires_at).toBe(new Date(t0 + MAX_AGE_MS).toISOString())
        expect(old?.published_until).toBe(new Date(t0 + MAX_AGE_MS + LONGEST_MS).toISOString())
        expect(next?.retires_at).toBeNull()
      }

      h.current.clock.advance(MAX_AGE_MS)
      const handedOver = await listKeys(account)
      expect(handedOver.map((key) => key.status).sort()).toEqual(['retiring', 'retiring', 'signing', 'signing'])
      expect(byAlg(handedOver, 'ES256', 'signing')[0]?.kid).toBe(created.find((key) => key.alg === 'ES256')?.kid)

      h.current.clock.advance(LONGEST_MS)
      const done = await listKeys(account)
      expect(done.map((key) => `${key.alg}:${key.status}`).sort()).toEqual(['ES256:retired', 'ES256:signing', 'RS256:retired', 'RS256:signing'])
      expect(byAlg(done, 'RS256', 'retired')[0]?.kid).toBe(first.find((key) => key.alg === 'RS256')?.kid)
    })

    it('records an oauth.key.rotated event naming the new keys, with no private key material', async () => {
      const account = await createAccount(h.current)
      const created = await rotate(account)
      const { db } = h.current.herald.database
      const events = await db.selectFrom('events').selectAll().where('account_id', '=', account.id).where('type', '=', 'oauth.key.rotated').execute()
      expect(events).toHaveLength(1)
      const event = events[0]!
      expect(event.created_at).toBe(h.current.clock.now())
      const data = JSON.parse(event.data) as { keys: Array<Record<string, unknown>> }
      expect(data.keys.map((key) => key.kid).sort()).toEqual(created.map((key) => key.kid).sort())
      for (const key of data.keys) expect(Object.keys(key).sort()).toEqual(['alg', 'kid', 'signs_from'])

      const rows = await db.selectFrom('signing_keys').select(['private_key']).where('account_id', '=', account.id).execute()
      expect(rows).toHaveLength(4)
      for (const row of rows) expect(event.data).not.toContain(row.private_key)
      expect(event.data).not.toContain('-----BEGIN')
      expect(event.data).not.toMatch(/"(d|p|q|dp|dq|qi)"\s*:/)
      expect(event.data).not.toContain('private')
    })
  })

  describe('emergency revocation', () => {
    it('removes the signing ES256 key from the JWKS at once, refuses its tokens, and keeps signing with another key', async () => {
      const account = await createAccount(h.current)
      const before = await managementToken(account, 'herald:keys:write')
      const revokedKid = kidOf(before)
      expect((await jwks(account)).kids).toContain(revokedKid)

      const response = await call<KeyView>(`${account.base}/keys/${revokedKid}/revoke`, 'POST', { token: before })
      expect(response.status).toBe(200)
      expect(response.body).toMatchObject({ kid: revokedKid, alg: 'ES256', status: 'revoked', revoked_at: new Date(h.current.clock.now()).toISOString() })

      // At once: no clock advance, no cache expiry.
      const after = await jwks(account)
      expect(after.kids).not.toContain(revokedKid)
      await expect(verify(h.current, account, before, after.verifier)).rejects.toThrow()

      const refused = await call(`${account.base}/keys`, 'GET', { token: before })
      expect(refused.status).toBe(401)
      expect(refused.body).toMatchObject({ code: 'invalid_token' })
      expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/)

      const fresh = await managementToken(account, 'herald:keys:write')
      const freshKid = kidOf(fresh)
      expect(freshKid).not.toBe(revokedKid)
      expect(decodeProtectedHeader(fresh).alg).toBe('ES256')
      const remote = createRemoteJWKSet(new URL(`${account.base}/.well-known/jwks.json`))
      await expect(verify(h.current, account, fresh, remote)).resolves.toMatchObject({ protectedHeader: { kid: freshKid } })

      const listed = await call<{ data: KeyView[] }>(`${account.base}/keys`, 'GET', { token: fresh })
      expect(listed.status).toBe(200)
      expect(listed.body.data.find((key) => key.kid === revokedKid)?.status).toBe('revoked')
      expect(listed.body.data.find((key) => key.kid === freshKid)?.status).toBe('signing')

      const again = await call(`${account.base}/keys/${revokedKid}/revoke`, 'POST', { token: fresh })
      expect(again.status).toBe(404)

      const events = await h.current.herald.database.db
        .selectFrom('events')
        .selectAll()
        .where('account_id', '=', account.id)
        .where('type', '=', 'oauth.key.revoked')
        .execute()
      expect(events).toHaveLength(1)
      expect(JSON.parse(events[0]!.data)).toEqual({ kid: revokedKid, alg: 'ES256', signs_from: expect.any(String) })
    })

    it('brings the upcoming key forward when the signing key is revoked during a rotation', async () => {
      const account = await createAccount(h.current)
      const oldKid = kidOf(await managementToken(account))
      const created = await rotate(account)
      const upcoming = created.find((key) => key.alg === 'ES256')!.kid

      const token = await managementToken(account, 'herald:keys:write')
      expect(kidOf(token)).toBe(oldKid)
      const response = await call(`${account.base}/keys/${oldKid}/revoke`, 'POST', { token })
      expect(response.status).toBe(200)

      const next = await managementToken(account)
      expect(kidOf(next)).toBe(upcoming)
      await verify(h.current, account, next, (await jwks(account)).verifier)
      expect((await jwks(account)).kids).not.toContain(oldKid)
    })

    it('keeps signing after the handover when the upcoming key of a rotation is revoked', async () => {
      const account = await createAccount(h.current)
      const created = await rotate(account)
      const upcoming = created.find((key) => key.alg === 'ES256')!.kid
      const token = await managementToken(account, 'herald:keys:write')
      const response = await call(`${account.base}/keys/${upcoming}/revoke`, 'POST', { token })
      expect(response.status).toBe(200)
      expect((await jwks(account)).kids).not.toContain(upcoming)

      // The old key was scheduled to retire when the revoked one took over; tokens must still be issued after that.
      h.current.clock.advance(MAX_AGE_MS + 1000)
      const later = await call<{ access_token: string }>(`${account.base}/oauth/tokens`, 'POST', {
        headers: { authorization: basicAuth(account.clientId, account.clientSecret) },
        form: { grant_type: 'client_credentials' },
      })
      expect(later.status, later.text).toBe(200)
      expect(kidOf(later.body.access_token)).not.toBe(upcoming)
      await verify(h.current, account, later.body.access_token, (await jwks(account)).verifier)
    })

    it('hands over to the next upcoming key, without a gap, when the middle one of two rotations is revoked', async () => {
      const account = await createAccount(h.current)
      const firstKid = kidOf(await managementToken(account))
      const t0 = h.current.clock.now()
      const middle = (await rotate(account)).find((key) => key.alg === 'ES256')!
      h.current.clock.advance(10_000)
      const last = (await rotate(account)).find((key) => key.alg === 'ES256')!
      expect(Date.parse(last.signs_from)).toBe(t0 + 10_000 + MAX_AGE_MS)

      const token = await managementToken(account, 'herald:keys:write')
      expect((await call(`${account.base}/keys/${middle.kid}/revoke`, 'POST', { token })).status).toBe(200)

      // Between the revoked key's planned start and the next key's start, the first key still signs.
      h.current.clock.advance(MAX_AGE_MS - 5000)
      const between = await call<{ access_token: string }>(`${account.base}/oauth/tokens`, 'POST', {
        headers: { authorization: basicAuth(account.clientId, account.clientSecret) },
        form: { grant_type: 'client_credentials' },
      })
      expect(between.status, between.text).toBe(200)
      expect(kidOf(between.body.access_token)).toBe(firstKid)

      h.current.clock.advance(5000)
      const next = await managementToken(account)
      expect(kidOf(next)).toBe(last.kid)
      const view = await jwks(account)
      expect(view.kids).toContain(firstKid)
      expect(view.kids).not.toContain(middle.kid)
      await verify(h.current, account, between.body.access_token, view.verifier)
      await verify(h.current, account, next, view.verifier)
    })

    it('answers 404 for an unknown kid and for a key of another account, and 403 without herald:keys:write', async () => {
      const account = await createAccount(h.current)
      const other = await createAccount(h.current, 'other')
      const otherKid = kidOf(await managementToken(other))
      const token = await managementToken(account, 'herald:keys:write')

      expect((await call(`${account.base}/keys/key_00000000000000000000000000/revoke`, 'POST', { token })).status).toBe(404)
      expect((await call(`${account.base}/keys/${otherKid}/revoke`, 'POST', { token })).status).toBe(404)
      expect((await jwks(other)).kids).toContain(otherKid)

      const weak = await managementToken(account, 'herald:clients:read')
      const forbidden = await call(`${account.base}/keys/rotate`, 'POST', { token: weak })
      expect(forbidden.status).toBe(403)
      expect(forbidden.body).toMatchObject({ code: 'insufficient_scope' })
      expect(await listKeys(account)).toHaveLength(2)
    })
  })
})
