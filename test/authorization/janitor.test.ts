import { expect, it } from 'vitest'
import { forEachDialect, useHerald } from '../support/herald.js'
import { call, createAccount, managementToken } from '../support/http.js'
import { Browser, LoginApp, authorizationUrl, prepareSignIn, redeemCode, signIn } from '../support/sign-in.js'
import { LOCAL_DELIVERY } from '../webhooks/support.js'

const HOUR = 3600_000

/** The sign-in tables stay bounded: every kind of row goes once it can serve no one, and live ones stay. */
forEachDialect((dialect) => {
  // The relying party has a back-channel logout URI on loopback, so its sessions record it.
  const h = useHerald(dialect, LOCAL_DELIVERY)

  it('prunes lapsed flows, logout requests, sessions (with the clients that took part), consents and the refresh tokens of lapsed grants, and keeps live ones', async () => {
    const account = await createAccount(h.current)
    const admin = await managementToken(account)
    const settings = { logout_url: 'https://login.example/logout', session_ttl: 2 * 3600, refresh_token_idle_ttl: 3600, refresh_token_absolute_ttl: 3 * 3600 }
    expect((await call(`${account.base}/settings`, 'PATCH', { token: admin, json: settings })).status).toBe(200)
    const rp = await prepareSignIn(account, { grant_types: ['authorization_code', 'refresh_token'], scope: 'openid offline_access', backchannel_logout_uri: 'http://127.0.0.1:9/logout' })
    const url = authorizationUrl(account.base, rp.clientId, { scope: 'openid offline_access' })

    const signedIn = async (rememberFor: number) => {
      const callback = await signIn(new Browser(), await LoginApp.of(account), url, `user-${rememberFor}`, { remember: true, remember_for: rememberFor })
      expect((await redeemCode(account.base, rp, callback)).status).toBe(200)
    }
    await signedIn(HOUR / 1000)
    await new Browser().open(url)
    await new Browser().open(`${account.base}/oauth/logout`)
    h.current.clock.advance(2.5 * HOUR)
    // Signed in later: everything of it is live at the janitor's pass.
    await signedIn(10 * HOUR / 1000)

    const { db } = h.current.herald.database
    const count = async (table: 'authorization_flows' | 'logout_requests' | 'browser_sessions' | 'session_clients' | 'consents' | 'refresh_tokens') =>
      (await db.selectFrom(table).select('account_id').where('account_id', '=', account.id).execute()).length
    const before = { flows: await count('authorization_flows'), logouts: await count('logout_requests'), sessions: await count('browser_sessions'), joined: await count('session_clients'), consents: await count('consents'), refresh: await count('refresh_tokens') }
    expect(before).toEqual({ flows: 3, logouts: 1, sessions: 2, joined: 2, consents: 2, refresh: 2 })

    // At 4 h: the unanswered login and the logout request lapsed long ago; the first session (session_ttl, 2 h),
    // consent (remember_for, 1 h) and grant (absolute 3 h + the access token's hour) have lapsed; the second's live.
    h.current.clock.advance(1.5 * HOUR)
    const { pruners } = h.current.herald
    const janitor = async () => {
      for (const pruner of [pruners.flows, pruners.logoutRequests, pruners.sessions, pruners.consents]) await pruner.runOnce()
    }
    await janitor()
    const after = { flows: await count('authorization_flows'), logouts: await count('logout_requests'), sessions: await count('browser_sessions'), joined: await count('session_clients'), consents: await count('consents'), refresh: await count('refresh_tokens') }
    expect(after).toEqual({ flows: 1, logouts: 0, sessions: 1, joined: 1, consents: 1, refresh: 1 })

    // At 7 h the second grant (6.5 h) and session (4.5 h) have lapsed too; its consent is remembered for 10 h.
    h.current.clock.advance(3 * HOUR)
    await janitor()
    expect({ flows: await count('authorization_flows'), sessions: await count('browser_sessions'), joined: await count('session_clients'), consents: await count('consents'), refresh: await count('refresh_tokens') }).toEqual({
      flows: 0,
      sessions: 0,
      joined: 0,
      consents: 1,
      refresh: 0,
    })
  })
})
