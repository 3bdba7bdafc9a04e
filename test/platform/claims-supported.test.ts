import { createRemoteJWKSet, jwtVerify } from 'jose'
import { expect, it } from 'vitest'
import { forEachDialect, useHerald } from '../support/herald.js'
import { call, createAccount, managementToken } from '../support/http.js'
import { authorizationUrl, Browser, LoginApp, prepareSignIn, redeemCode, signIn } from '../support/sign-in.js'

/** OpenID Connect Core §5.1 and §5.4: the standard claims, by the scope that asks for them. */
const STANDARD_CLAIMS = {
  profile: { name: 'Ada Lovelace', family_name: 'Lovelace', given_name: 'Ada', middle_name: 'King', nickname: 'ada', preferred_username: 'ada', profile: 'https://example.com/ada', picture: 'https://example.com/ada.png', website: 'https://example.com', gender: 'female', birthdate: '1815-12-10', zoneinfo: 'Europe/London', locale: 'en-GB', updated_at: 1_700_000_000 },
  email: { email: 'ada@example.com', email_verified: true },
  address: { address: { formatted: '12 St James Square, London', country: 'GB' } },
  phone: { phone_number: '+44 20 7946 0000', phone_number_verified: false },
}

forEachDialect((dialect) => {
  const h = useHerald(dialect)

  it('lists in claims_supported every claim of an ID token whose consent gave every standard claim', async () => {
    const account = await createAccount(h.current)
    const token = await managementToken(account)
    for (const scope of ['address', 'phone']) expect((await call(`${account.base}/oauth/scopes`, 'POST', { token, json: { name: scope } })).status).toBe(201)
    const scope = `openid ${Object.keys(STANDARD_CLAIMS).join(' ')}`
    const rp = await prepareSignIn(account, { scope })
    const given = Object.assign({}, ...Object.values(STANDARD_CLAIMS)) as Record<string, unknown>
    const callback = await signIn(new Browser(), await LoginApp.of(account), authorizationUrl(account.base, rp.clientId, { scope, nonce: 'n-0S6_WzA2Mj' }), 'ada', { session: { id_token: given } })
    const tokens = await redeemCode<{ id_token: string }>(account.base, rp, callback)
    expect(tokens.status, tokens.text).toBe(200)

    const discovery = await call<{ claims_supported: string[] }>(`${account.issuer}/.well-known/openid-configuration`, 'GET')
    const { payload } = await jwtVerify(tokens.body.id_token, createRemoteJWKSet(new URL(`${account.issuer}/.well-known/jwks.json`)), { issuer: account.issuer, audience: rp.clientId })
    // Every standard claim the consent gave went into the ID token, and every claim there is listed.
    expect(payload).toMatchObject(given)
    expect(discovery.body.claims_supported).toEqual(expect.arrayContaining(Object.keys(payload)))
  })
})
