import { decodeJwt } from 'jose'
import * as oidc from 'openid-client'
import { expect, it } from 'vitest'
import { type CreatedAccount, forEachDialect, useHerald } from '../support/herald.js'
import { basicAuth, call, managementToken } from '../support/http.js'
import { type SignInClient, discoverClient, setupSignIn, signInThroughClient } from '../support/sign-in.js'

const CLIENT_SCOPE = 'openid email profile offline_access'
/** What the consent app gives for the ID token: claims of the `email` and `profile` scopes, and one of its own. */
const ID_TOKEN_CLAIMS = { email: 'ada@example.com', email_verified: true, name: 'Ada Lovelace', tenant: 'acme' }
const PROFILE_ONLY = { name: 'Ada Lovelace', tenant: 'acme' }

/**
 * A user's grant follows its client: a scope taken from the client is gone from the grant's next token, and stays
 * gone. Each token (access, ID, and userinfo answered for it) tells the consent's claims of its own scope only.
 */
forEachDialect((dialect) => {
  const h = useHerald(dialect)

  interface Party {
    account: CreatedAccount
    rp: SignInClient
    config: oidc.Configuration
  }

  /** Signs user-1 in with every scope of the client, up to the callback; `redeem` gets the tokens. */
  async function signedIn(): Promise<Party & { redeem: () => Promise<oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers> }> {
    const { account, rp, app } = await setupSignIn(h.current, { grant_types: ['authorization_code', 'refresh_token'], scope: CLIENT_SCOPE })
    const config = await discoverClient({ account, rp })
    const { redeem } = await signInThroughClient(config, app, 'user-1', { scope: CLIENT_SCOPE, consent: { session: { id_token: ID_TOKEN_CLAIMS } } })
    return { account, rp, config, redeem }
  }

  async function setClientScope({ account, rp }: Party, scope: string): Promise<void> {
    const changed = await call(`${account.base}/oauth/clients/${rp.clientId}`, 'PATCH', { token: await managementToken(account), json: { scope } })
    expect(changed.status, changed.text).toBe(200)
  }

  /** The token's scope three ways: the token response, the JWT's claim, and introspection (RFC 7662). */
  async function scopesOf({ account, rp }: Party, tokens: oidc.TokenEndpointResponse): Promise<string[]> {
    const introspected = await call<{ active: boolean; scope: string }>(`${account.base}/oauth/introspect`, 'POST', { headers: { authorization: basicAuth(rp.clientId, rp.clientSecret) }, form: { token: tokens.access_token } })
    expect(introspected.body.active).toBe(true)
    expect(decodeJwt(tokens.access_token).scope).toBe(tokens.scope)
    expect(introspected.body.scope).toBe(tokens.scope)
    return tokens.scope!.split(' ').sort()
  }

  /** The ID token's and userinfo's claims beyond the protocol's own, each checked by openid-client. */
  async function userClaims({ config }: Party, tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers) {
    const { email, email_verified, name, tenant } = tokens.claims()!
    const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, 'user-1')
    const { sub, ...fromUserinfo } = userinfo
    expect(sub).toBe('user-1')
    return { idToken: withoutUndefined({ email, email_verified, name, tenant }), userinfo: fromUserinfo }
  }

  it("drops a scope taken from the client from the grant's next refresh, and never gives it back", async () => {
    const party = await signedIn()
    const tokens = await party.redeem()
    expect(await userClaims(party, tokens)).toEqual({ idToken: ID_TOKEN_CLAIMS, userinfo: ID_TOKEN_CLAIMS })

    await setClientScope(party, 'openid profile offline_access')
    const cut = await oidc.refreshTokenGrant(party.config, tokens.refresh_token!)
    expect(await scopesOf(party, cut)).toEqual(['offline_access', 'openid', 'profile'])
    expect(await userClaims(party, cut)).toEqual({ idToken: PROFILE_ONLY, userinfo: PROFILE_ONLY })
    await expect(oidc.refreshTokenGrant(party.config, cut.refresh_token!, { scope: 'openid email' })).rejects.toMatchObject({ error: 'invalid_scope' })

    // The client is allowed email again; the grant's refresh token was issued without it, and stays so.
    await setClientScope(party, CLIENT_SCOPE)
    const later = await oidc.refreshTokenGrant(party.config, cut.refresh_token!)
    expect(await scopesOf(party, later)).toEqual(['offline_access', 'openid', 'profile'])
    expect(await userClaims(party, later)).toEqual({ idToken: PROFILE_ONLY, userinfo: PROFILE_ONLY })
  })

  it('redeems a code for the scopes the client still has, with the claims of those scopes only', async () => {
    const party = await signedIn()
    await setClientScope(party, 'openid profile offline_access')
    const tokens = await party.redeem()
    expect(await scopesOf(party, tokens)).toEqual(['offline_access', 'openid', 'profile'])
    expect(await userClaims(party, tokens)).toEqual({ idToken: PROFILE_ONLY, userinfo: PROFILE_ONLY })
  })

  it("answers a refresh narrowed by its scope parameter with that scope's claims, in the ID token and userinfo", async () => {
    const party = await signedIn()
    const tokens = await party.redeem()
    const narrowed = await oidc.refreshTokenGrant(party.config, tokens.refresh_token!, { scope: 'openid offline_access' })
    expect(await scopesOf(party, narrowed)).toEqual(['offline_access', 'openid'])
    expect(await userClaims(party, narrowed)).toEqual({ idToken: { tenant: 'acme' }, userinfo: { tenant: 'acme' } })
    // The first token still tells what it was issued for.
    expect((await oidc.fetchUserInfo(party.config, tokens.access_token, 'user-1')).email).toBe('ada@example.com')
  })

  it('refreshes nothing for a client that lost offline_access', async () => {
    const party = await signedIn()
    const tokens = await party.redeem()
    await setClientScope(party, 'openid email profile')
    await expect(oidc.refreshTokenGrant(party.config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' })
  })
})

function withoutUndefined(claims: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(claims).filter(([, value]) => value !== undefined))
}
