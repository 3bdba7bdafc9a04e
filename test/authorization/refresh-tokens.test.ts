import { decodeJwt } from 'jose'
import * as oidc from 'openid-client'
import { describe, expect, it } from 'vitest'
import { forEachDialect, useHerald } from '../support/herald.js'
import { basicAuth, call, createAccount, managementToken } from '../support/http.js'
import { Browser, LoginApp, REDIRECT_URI, authorizationUrl, prepareSignIn, redeemCode, signIn } from '../support/sign-in.js'

/** Refresh tokens: rotation, reuse detection that revokes the grant, lifetimes that never grow (RFC 9700 §4.14). */
forEachDialect((dialect) => {
  const h = useHerald(dialect)

  async function signedIn(client: Record<string, unknown> = {}, settings: Record<string, unknown> = {}) {
    const account = await createAccount(h.current)
    const rp = await prepareSignIn(account, { grant_types: ['authorization_code', 'refresh_token'], scope: 'openid email offline_access', ...client })
    if (Object.keys(settings).length > 0) {
      expect((await call(`${account.base}/settings`, 'PATCH', { token: await managementToken(account), json: settings })).status).toBe(200)
    }
    const config = await oidc.discovery(new URL(account.issuer), rp.clientId, undefined, oidc.ClientSecretBasic(rp.clientSecret), { execute: [oidc.allowInsecureRequests] })
    const verifier = oidc.randomPKCECodeVerifier()
    const nonce = oidc.randomNonce()
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, scope: 'openid offline_access', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', nonce })
    const callback = await signIn(new Browser(), await LoginApp.of(account), url.href, 'user-1')
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedNonce: nonce })
    return { account, rp, config, tokens }
  }

  const introspect = async (base: string, rp: { clientId: string; clientSecret: string }, token: string) =>
    (await call<{ active: boolean }>(`${base}/oauth/introspect`, 'POST', { headers: { authorization: basicAuth(rp.clientId, rp.clientSecret) }, form: { token } })).body.active

  it('rotates on every refresh, answers a new ID token, and revokes the whole grant when a spent token comes back', async () => {
    const { account, rp, config, tokens } = await signedIn()
    expect(tokens.refresh_token).toBeTruthy()
    const first = await oidc.refreshTokenGrant(config, tokens.refresh_token!)
    expect(first.refresh_token).not.toBe(tokens.refresh_token)
    expect(first.claims()?.sub).toBe('user-1')
    expect(first.claims()?.auth_time).toBe(tokens.claims()?.auth_time)
    const second = await oidc.refreshTokenGrant(config, first.refresh_token!)
    expect(await introspect(account.base, rp, second.access_token)).toBe(true)

    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' })
    for (const accessToken of [tokens.access_token, first.access_token, second.access_token]) expect(await introspect(account.base, rp, accessToken)).toBe(false)
    await expect(oidc.refreshTokenGrant(config, second.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' })
    expect((await call(`${account.base}/oauth/userinfo`, 'GET', { token: second.access_token })).status).toBe(401)

    const events = await call<{ data: Array<{ type: string }> }>(`${account.base}/webhooks/events?limit=50`, 'GET', { token: await managementToken(account) })
    expect(events.body.data.map((event) => event.type)).toEqual(expect.arrayContaining(['oauth.refresh_token.reuse_detected', 'oauth.grant.revoked']))
  })

  it("revokes a refresh token's whole grant at the revocation endpoint, for its own client only", async () => {
    const { account, rp, config, tokens } = await signedIn()
    const other = await prepareSignIn(account, { grant_types: ['authorization_code', 'refresh_token'] })
    const revoke = (client: { clientId: string; clientSecret: string }) =>
      call(`${account.base}/oauth/revoke`, 'POST', { headers: { authorization: basicAuth(client.clientId, client.clientSecret) }, form: { token: tokens.refresh_token!, token_type_hint: 'refresh_token' } })
    expect((await revoke(other)).status).toBe(200)
    const b = await createAccount(h.current)
    const bClient = await prepareSignIn(b)
    expect((await call(`${b.base}/oauth/revoke`, 'POST', { headers: { authorization: basicAuth(bClient.clientId, bClient.clientSecret) }, form: { token: tokens.refresh_token! } })).status).toBe(200)
    expect(await introspect(account.base, rp, tokens.access_token)).toBe(true)
    expect((await revoke(rp)).status).toBe(200)
    expect(await introspect(account.base, rp, tokens.access_token)).toBe(false)
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' })
  })

  it('issues no refresh token without offline_access, or to a client without the grant', async () => {
    const account = await createAccount(h.current)
    const rp = await prepareSignIn(account, { grant_types: ['authorization_code'], scope: 'openid offline_access' })
    const app = await LoginApp.of(account)
    const callback = await signIn(new Browser(), app, authorizationUrl(account.base, rp.clientId, { scope: 'openid offline_access' }), 'u')
    const answer = await redeemCode(account.base, rp, callback)
    expect(answer.status).toBe(200)
    expect(answer.body).not.toHaveProperty('refresh_token')
  })

  it('narrows scope on request and never widens it', async () => {
    const { config, tokens } = await signedIn()
    const narrowed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, { scope: 'offline_access' })
    expect(narrowed.scope).toBe('offline_access')
    expect(narrowed.id_token).toBeUndefined()
    await expect(oidc.refreshTokenGrant(config, narrowed.refresh_token!, { scope: 'openid' })).rejects.toMatchObject({ error: 'invalid_scope' })
  })

  it('lapses at the idle lifetime without use, and at the absolute lifetime despite use', async () => {
    const { config, tokens } = await signedIn({ refresh_token_idle_ttl: 600, refresh_token_absolute_ttl: 1500 })
    h.current.clock.advance(500_000)
    const used = await oidc.refreshTokenGrant(config, tokens.refresh_token!)
    h.current.clock.advance(500_000)
    const usedAgain = await oidc.refreshTokenGrant(config, used.refresh_token!)
    h.current.clock.advance(599_000)
    // 1599 s after the grant: within the idle lifetime of the last token, past the absolute one.
    await expect(oidc.refreshTokenGrant(config, usedAgain.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' })

    const idle = await signedIn({ refresh_token_idle_ttl: 600 })
    h.current.clock.advance(601_000)
    await expect(oidc.refreshTokenGrant(idle.config, idle.tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' })
  })

  it('answers a retry within the reuse interval with the same successor, and revokes after it', async () => {
    const { account, rp, tokens } = await signedIn({}, { refresh_token_reuse_interval: 10 })
    const refresh = async (token: string) =>
      call<{ refresh_token?: string; access_token?: string; error?: string }>(`${account.base}/oauth/tokens`, 'POST', {
        headers: { authorization: basicAuth(rp.clientId, rp.clientSecret) },
        form: { grant_type: 'refresh_token', refresh_token: token },
      })
    const first = await refresh(tokens.refresh_token!)
    const retried = await refresh(tokens.refresh_token!)
    expect(retried.status).toBe(200)
    expect(retried.body.refresh_token).toBe(first.body.refresh_token)
    expect(decodeJwt(retried.body.access_token!).jti).not.toBe(decodeJwt(first.body.access_token!).jti)
    h.current.clock.advance(11_000)
    expect((await refresh(tokens.refresh_token!)).body.error).toBe('invalid_grant')
    expect((await refresh(first.body.refresh_token!)).body.error).toBe('invalid_grant')
  })

  it.runIf(dialect === 'postgres')('lets exactly one of two concurrent refreshes of one token win', async () => {
    const { account, rp, tokens } = await signedIn()
    const refresh = () =>
      call(`${account.base}/oauth/tokens`, 'POST', { headers: { authorization: basicAuth(rp.clientId, rp.clientSecret) }, form: { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! } })
    const answers = await Promise.all([refresh(), refresh()])
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400])
  })

  it.runIf(dialect === 'postgres')('answers two concurrent refreshes within the reuse interval with one successor, writing one', async () => {
    const { account, rp, tokens } = await signedIn({}, { refresh_token_reuse_interval: 10 })
    const refresh = () =>
      call<{ refresh_token: string }>(`${account.base}/oauth/tokens`, 'POST', { headers: { authorization: basicAuth(rp.clientId, rp.clientSecret) }, form: { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! } })
    const answers = await Promise.all([refresh(), refresh()])
    expect(answers.map((answer) => answer.status)).toEqual([200, 200])
    expect(answers[0]!.body.refresh_token).toBe(answers[1]!.body.refresh_token)
    const rows = await h.current.herald.database.db.selectFrom('refresh_tokens').select('id').where('account_id', '=', account.id).execute()
    expect(rows).toHaveLength(2)
  })

  describe('across accounts and clients', () => {
    it("refuses A's refresh token at B's token endpoint, and at another client of A", async () => {
      const { account, tokens } = await signedIn()
      const b = await createAccount(h.current)
      const bClient = await prepareSignIn(b, { grant_types: ['authorization_code', 'refresh_token'] })
      const other = await prepareSignIn(account, { grant_types: ['authorization_code', 'refresh_token'] })
      for (const [base, client] of [
        [b.base, bClient],
        [account.base, other],
      ] as const) {
        const answer = await call<{ error: string }>(`${base}/oauth/tokens`, 'POST', {
          headers: { authorization: basicAuth(client.clientId, client.clientSecret) },
          form: { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! },
        })
        expect(answer.body.error).toBe('invalid_grant')
      }
    })
  })
})
