import { createRemoteJWKSet, jwtVerify } from 'jose'
import { describe, expect, it } from 'vitest'
import { forEachDialect, useHerald } from '../support/herald.js'
import type { CreatedAccount } from '../support/herald.js'
import { call, createAccount, managementToken } from '../support/http.js'
import { DEVICE_DONE_URL, DEVICE_GRANT, DEVICE_VERIFICATION_URL, poll, prepareDevice, startDevice } from '../support/device.js'
import { Browser, LoginApp, challengeIn } from '../support/sign-in.js'
import { WRONG_CODES_PER_ACCOUNT, WRONG_CODES_PER_ADDRESS, WRONG_CODE_WINDOW_MS } from '../../src/authorization/device/device-verification.js'

/** The account's app answering device requests (herald:login). */
async function deviceApp(account: CreatedAccount) {
  const token = await managementToken(account, 'herald:login')
  const url = (challenge: string, verb = '') => `${account.base}/oauth/device-requests/${encodeURIComponent(challenge)}${verb}`
  return {
    read: (challenge: string) => call<{ attempts_left: number }>(url(challenge), 'GET', { token }),
    accept: (challenge: string, userCode: string) => call<{ redirect_to: string; code?: string }>(url(challenge, '/accept'), 'POST', { token, json: { user_code: userCode } }),
    reject: (challenge: string, json: Record<string, unknown> = {}) => call<{ redirect_to: string }>(url(challenge, '/reject'), 'POST', { token, json }),
  }
}

type DeviceApp = Awaited<ReturnType<typeof deviceApp>>

/** The challenge in a redirect to the account's device page. */
function deviceChallengeIn(location: string | null): string {
  expect(location).toMatch(DEVICE_VERIFICATION_URL)
  return new URL(location!).searchParams.get('device_challenge')!
}

/** RFC 8628 end to end: the device polls (oauth4webapi), the user verifies in a browser through the account's app. */
forEachDialect((dialect) => {
  const h = useHerald(dialect)

  async function setup(settings: Record<string, unknown> = {}) {
    const account = await createAccount(h.current)
    const device = await prepareDevice(account, {}, settings)
    return { account, device, app: await deviceApp(account), login: await LoginApp.of(account), browser: new Browser() }
  }

  it('polls pending, slows down, then gets tokens once after the device, login and consent challenges', async () => {
    const { account, device, app, login, browser } = await setup()
    expect(device.as.device_authorization_endpoint).toBe(`${account.issuer}/oauth/device_authorization`)
    expect(device.as.grant_types_supported).toContain(DEVICE_GRANT)
    const started = await startDevice(device)
    expect(started.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/)
    expect(started.verification_uri).toBe(`${account.issuer}/oauth/device`)
    expect(started).toMatchObject({ expires_in: 600, interval: 5 })

    expect(await poll(device, started.device_code)).toEqual({ error: 'authorization_pending' })
    expect(await poll(device, started.device_code)).toEqual({ error: 'slow_down' })
    h.current.clock.advance(5_000)
    expect(await poll(device, started.device_code), 'the interval grew to 10 s').toEqual({ error: 'slow_down' })
    h.current.clock.advance(15_000)
    expect(await poll(device, started.device_code)).toEqual({ error: 'authorization_pending' })

    const opened = await browser.open(started.verification_uri_complete!)
    expect(opened.status).toBe(302)
    expect(new URL(opened.location!).searchParams.get('user_code')).toBe(started.user_code)
    const challenge = deviceChallengeIn(opened.location)
    expect((await app.read(challenge)).body).toMatchObject({ attempts_left: 5 })
    const accepted = await app.accept(challenge, started.user_code.toLowerCase().replace('-', ''))
    expect(accepted.status, accepted.text).toBe(200)

    const loginChallenge = challengeIn(accepted.body.redirect_to, 'login')
    const loginRequest = await login.loginRequest(loginChallenge)
    expect(loginRequest.body).toMatchObject({ flow: 'device', client: { client_id: device.clientId }, requested_scope: ['openid', 'offline_access'], request_url: `${account.issuer}/oauth/device` })
    const afterLogin = await browser.open(await login.accept('login', loginChallenge, { subject: 'tv-user' }))
    const consentChallenge = challengeIn(afterLogin.location, 'consent')
    expect((await login.consentRequest(consentChallenge)).body).toMatchObject({ flow: 'device' })
    const done = await browser.open(await login.accept('consent', consentChallenge, { grant_scope: ['openid', 'offline_access'] }))
    expect(done.status).toBe(302)
    expect(done.location).toMatch(DEVICE_DONE_URL)
    expect(new URL(done.location!).searchParams.has('code')).toBe(false)

    const tokens = await poll(device, started.device_code)
    if ('error' in tokens) throw new Error(`no tokens: ${tokens.error}`)
    expect(tokens.refresh_token).toBeTruthy()
    const { payload } = await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(`${account.issuer}/.well-known/jwks.json`)), {
      issuer: account.issuer,
      audience: device.clientId,
      currentDate: new Date(h.current.clock.now()),
    })
    expect(payload.sub).toBe('tv-user')
    expect(await poll(device, started.device_code), 'a device code yields tokens once').toEqual({ error: 'invalid_grant' })

    const events = await call<{ data: Array<{ type: string }> }>(`${account.base}/webhooks/events?limit=50`, 'GET', { token: await managementToken(account) })
    expect(events.body.data.map((event) => event.type)).toEqual(expect.arrayContaining(['oauth.device.accepted', 'oauth.login.accepted', 'oauth.consent.granted']))
  })

  it('answers access_denied after a rejected device request, or a rejected consent', async () => {
    const { device, app, login, browser } = await setup()
    const refused = await startDevice(device)
    const challenge = deviceChallengeIn((await browser.open(refused.verification_uri)).location)
    const rejected = await app.reject(challenge, { user_code: refused.user_code })
    expect(rejected.status, rejected.text).toBe(200)
    expect(new URL(rejected.body.redirect_to).searchParams.get('error')).toBe('access_denied')
    expect(await poll(device, refused.device_code)).toEqual({ error: 'access_denied' })

    const declined = await startDevice(device)
    const second = deviceChallengeIn((await browser.open(declined.verification_uri)).location)
    const loginChallenge = challengeIn((await app.accept(second, declined.user_code)).body.redirect_to, 'login')
    const consentChallenge = challengeIn((await browser.open(await login.accept('login', loginChallenge, { subject: 'u' }))).location, 'consent')
    const answer = await login.answer('consent', consentChallenge, 'reject', { error: 'access_denied' })
    const back = await browser.open(answer.body.redirect_to)
    expect(back.location).toMatch(DEVICE_DONE_URL)
    expect(new URL(back.location!).searchParams.get('error')).toBe('access_denied')
    expect(await poll(device, declined.device_code)).toEqual({ error: 'access_denied' })
  })

  it('answers expired_token once the device code lapses, and its user code no longer verifies', async () => {
    const { device, app, browser } = await setup({ device_code_ttl: 60 })
    const started = await startDevice(device)
    expect(started.expires_in).toBe(60)
    h.current.clock.advance(60_000)
    expect(await poll(device, started.device_code)).toEqual({ error: 'expired_token' })
    const challenge = deviceChallengeIn((await browser.open(started.verification_uri)).location)
    const late = await app.accept(challenge, started.user_code)
    expect(late.status).toBe(400)
    expect(late.body).toMatchObject({ code: 'invalid_user_code' })
  })

  describe('brute force (RFC 8628 §5.1)', () => {
    it('spends a challenge after five wrong codes, and uses a code once', async () => {
      const { device, app, browser } = await setup()
      const started = await startDevice(device)
      const challenge = deviceChallengeIn((await browser.open(started.verification_uri)).location)
      for (let attempt = 1; attempt <= 5; attempt++) {
        const wrong = await app.accept(challenge, 'BCDF-BCDF')
        expect(wrong.status, wrong.text).toBe(400)
        expect(wrong.body).toMatchObject({ code: 'invalid_user_code' })
      }
      expect((await app.accept(challenge, started.user_code)).status, 'the spent challenge takes even the right code no more').toBe(409)

      const fresh = deviceChallengeIn((await browser.open(started.verification_uri)).location)
      expect((await app.accept(fresh, started.user_code)).status).toBe(200)
      const again = deviceChallengeIn((await browser.open(started.verification_uri)).location)
      expect((await app.accept(again, started.user_code)).body).toMatchObject({ code: 'invalid_user_code' })
    })

    // The browsers' addresses, as a proxy on this machine (trusted by default) forwards them.
    const challengeFrom = async (browser: Browser, url: string, address: string) =>
      deviceChallengeIn((await browser.open(url, { headers: { 'x-forwarded-for': address } })).location)
    const guess = async (app: DeviceApp, challenge: string) => expect((await app.accept(challenge, 'ZZZZ-ZZZZ')).status).toBe(400)

    it("limits one address's wrong codes across challenges, without locking out anyone else", async () => {
      const { device, app, browser } = await setup({ device_code_ttl: 1800 })
      const started = await startDevice(device)
      for (let challenges = 0; challenges < WRONG_CODES_PER_ADDRESS / 5; challenges++) {
        const challenge = await challengeFrom(browser, started.verification_uri, '203.0.113.1')
        for (let attempt = 0; attempt < 5; attempt++) await guess(app, challenge)
      }
      const limited = await app.accept(await challengeFrom(browser, started.verification_uri, '203.0.113.1'), started.user_code)
      expect(limited.status, limited.text).toBe(429)
      expect(limited.body).toMatchObject({ code: 'too_many_requests' })
      const user = await app.accept(await challengeFrom(new Browser(), started.verification_uri, '198.51.100.7'), started.user_code)
      expect(user.status, 'the user, elsewhere, is not locked out').toBe(200)
    })

    it('limits the wrong codes of an account from every address, for the window', async () => {
      const { device, app, browser } = await setup({ device_code_ttl: 1800 })
      const started = await startDevice(device)
      for (let challenges = 0; challenges < WRONG_CODES_PER_ACCOUNT / 5; challenges++) {
        const challenge = await challengeFrom(browser, started.verification_uri, `203.0.113.${challenges % 50}`)
        for (let attempt = 0; attempt < 5; attempt++) await guess(app, challenge)
      }
      const limited = await app.accept(await challengeFrom(browser, started.verification_uri, '198.51.100.7'), started.user_code)
      expect(limited.status, limited.text).toBe(429)
      h.current.clock.advance(WRONG_CODE_WINDOW_MS + 1)
      expect((await app.accept(await challengeFrom(browser, started.verification_uri, '198.51.100.7'), started.user_code)).status).toBe(200)
    })
  })

  it("refuses account B's device codes and challenges at account A's routes", async () => {
    const a = await setup()
    const b = await setup()
    const started = await startDevice(b.device)
    expect(await poll(a.device, started.device_code)).toEqual({ error: 'invalid_grant' })
    const challenge = deviceChallengeIn((await b.browser.open(started.verification_uri)).location)
    expect((await a.app.read(challenge)).status).toBe(404)
    expect((await a.app.accept(challenge, started.user_code)).status).toBe(404)
    expect((await a.app.reject(challenge)).status).toBe(404)
    const own = deviceChallengeIn((await a.browser.open(`${a.account.base}/oauth/device`)).location)
    expect((await a.app.accept(own, started.user_code)).body, "B's user code names nothing in A").toMatchObject({ code: 'invalid_user_code' })
    expect(await poll(b.device, started.device_code)).toEqual({ error: 'authorization_pending' })
  })

  it('answers garbage with 4xx and writes nothing', async () => {
    const { account, device, app, browser } = await setup()
    const endpoint = `${account.base}/oauth/device_authorization`
    for (const body of ['', 'client_id=', `client_id=${device.clientId}&scope=unknown`, `client_id=${device.clientId}&client_id=x`, `client_id=${device.clientId}&scope=${'a'.repeat(5000)}`, 'client_id=nobody']) {
      const answer = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body })
      expect(answer.status, body).toBeGreaterThanOrEqual(400)
      expect(answer.status, body).toBeLessThan(500)
    }
    const json = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect(json.status).toBe(400)
    const noGrant = await prepareDevice(account, { grant_types: ['authorization_code'], response_types: ['code'], redirect_uris: ['http://127.0.0.1:9/cb'] })
    const refused = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `client_id=${noGrant.clientId}` })
    expect(await refused.json()).toMatchObject({ error: 'unauthorized_client' })

    const started = await startDevice(device)
    const challenge = deviceChallengeIn((await browser.open(started.verification_uri)).location)
    const token = await managementToken(account, 'herald:login')
    for (const json of [{}, { user_code: '' }, { user_code: 5 }, { user_code: started.user_code, extra: 1 }, { user_code: 'x'.repeat(100) }]) {
      const answer = await call(`${account.base}/oauth/device-requests/${challenge}/accept`, 'POST', { token, json })
      expect(answer.status, JSON.stringify(json)).toBe(400)
    }
    expect((await app.read('no-such-challenge')).status).toBe(404)
    expect((await browser.open(`${account.base}/oauth/device?user_code=a&user_code=b`)).status).toBe(400)
    expect(await poll(device, 'not-a-device-code')).toEqual({ error: 'invalid_grant' })
    expect((await app.read(challenge)).body, 'none of it touched the challenge').toMatchObject({ attempts_left: 5 })
    expect(await poll(device, started.device_code)).toEqual({ error: 'authorization_pending' })
  })
})
