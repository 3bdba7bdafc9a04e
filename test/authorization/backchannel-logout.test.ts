import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import * as oidc from 'openid-client'
import { describe, expect, it } from 'vitest'
import { type CreatedAccount, forEachDialect, useHerald } from '../support/herald.js'
import { call, createAccount, managementToken } from '../support/http.js'
import { Receiver, eventually } from '../support/receiver.js'
import { Browser, LoginApp, REDIRECT_URI, authorizationUrl, challengeIn, discoverClient, prepareSignIn, signInThroughClient } from '../support/sign-in.js'
import { type Delivery, LOCAL_DELIVERY, type WebhookApi, useReceiver, webhookApi } from '../webhooks/support.js'

const BACKCHANNEL_EVENT = 'http://schemas.openid.net/event/backchannel-logout'

interface ManagedEndpoint {
  id: string
  url: string
  client_id: string | null
}

/** OpenID Connect Back-Channel Logout 1.0, delivered through the webhook area's durable machinery. */
forEachDialect((dialect) => {
  const h = useHerald(dialect, LOCAL_DELIVERY)
  const receiver = useReceiver()

  /** A relying party with a back-channel logout URI, signed in as `subject` in `browser`; answers its ID token. */
  async function signedIn(account: CreatedAccount, browser: Browser, backchannelUri: string | null, subject = 'user-1') {
    const rp = await prepareSignIn(account, { backchannel_logout_uri: backchannelUri, backchannel_logout_session_required: true })
    const config = await discoverClient({ account, rp })
    const tokens = await (await signInThroughClient(config, await LoginApp.of(account), subject, { browser })).redeem()
    return { clientId: rp.clientId, config, idToken: tokens.id_token!, sid: tokens.claims()!.sid as string }
  }

  async function endpointOf(api: WebhookApi, clientId: string): Promise<ManagedEndpoint | undefined> {
    const page = await api.get<{ data: ManagedEndpoint[] }>('/webhooks/endpoints?limit=100')
    return page.body.data.find((endpoint) => endpoint.client_id === clientId)
  }

  async function deliveriesTo(api: WebhookApi, endpointId: string): Promise<Delivery[]> {
    const page = await api.get<{ data: Delivery[] }>(`/webhooks/deliveries?endpoint_id=${endpointId}`)
    return Promise.all(page.body.data.map(async (delivery) => (await api.get<Delivery>(`/webhooks/deliveries/${delivery.id}`)).body))
  }

  it('sends every client that took part in the session a logout token that jose verifies, and no other client', async () => {
    const account = await createAccount(h.current)
    const api = await webhookApi(account, h.current.clock)
    const browser = new Browser()
    const first = await signedIn(account, browser, `${receiver.current.url}/first`)
    const second = await signedIn(account, browser, `${receiver.current.url}/second`)
    expect(second.sid).toBe(first.sid)
    const elsewhere = await signedIn(account, new Browser(), `${receiver.current.url}/elsewhere`)
    expect(first.config.serverMetadata()).toMatchObject({ backchannel_logout_supported: true, backchannel_logout_session_supported: true })

    const logout = await browser.open(oidc.buildEndSessionUrl(first.config, { id_token_hint: first.idToken }).href)
    expect(logout.status, logout.text).toBe(200)
    await eventually(() => receiver.current.requests.length >= 2, 10_000, 'two logout tokens')
    await h.current.herald.webhooks.worker.runPass()
    expect(receiver.current.requests.map((request) => request.path).sort()).toEqual(['/hooks/first', '/hooks/second'])

    const jwks = createRemoteJWKSet(new URL(`${account.issuer}/.well-known/jwks.json`))
    for (const [request, client] of [
      [receiver.current.requests.find((r) => r.path === '/hooks/first')!, first],
      [receiver.current.requests.find((r) => r.path === '/hooks/second')!, second],
    ] as const) {
      expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded')
      const token = new URLSearchParams(request.body).get('logout_token')!
      const { payload, protectedHeader } = await jwtVerify(token, jwks, { issuer: account.issuer, audience: client.clientId, typ: 'logout+jwt', currentDate: new Date(h.current.clock.now()) })
      expect(protectedHeader.alg).toBe('RS256')
      expect(payload).toMatchObject({ sub: 'user-1', sid: first.sid, events: { [BACKCHANNEL_EVENT]: {} } })
      expect(payload.jti).toEqual(expect.any(String))
      expect(payload.exp! - payload.iat!).toBe(120)
      // §2.4: a logout token must not carry a nonce.
      expect(payload).not.toHaveProperty('nonce')
    }

    // The client signed in in another browser was not part of the session: no delivery was even made for it.
    const untouched = await endpointOf(api, elsewhere.clientId)
    expect(untouched).toBeDefined()
    expect(await deliveriesTo(api, untouched!.id)).toEqual([])
  })

  it('retries while the client is down, records every attempt, and delivers once it is back', async () => {
    const account = await createAccount(h.current)
    const api = await webhookApi(account, h.current.clock)
    const down = await Receiver.start()
    const port = down.port
    const rp = await signedIn(account, new Browser(), `${down.url}/logout`)
    await down.close()

    const ended = await call(`${account.base}/oauth/sessions?subject=user-1`, 'DELETE', { token: await managementToken(account, 'herald:sessions:write') })
    expect(ended.status).toBe(204)
    const endpoint = (await endpointOf(api, rp.clientId))!
    const [failed] = await eventually(async () => {
      const deliveries = await deliveriesTo(api, endpoint.id)
      return deliveries[0]?.attempt_count === 1 && deliveries
    }, 10_000, 'the first attempt')
    expect(failed).toMatchObject({ event_type: 'oauth.session.ended', status: 'pending', last_error: 'refused' })

    const back = await Receiver.start(undefined, port)
    try {
      h.current.clock.advanceSeconds(7)
      await eventually(() => back.requests.length === 1, 10_000, 'the retry')
      const delivered = await eventually(async () => {
        const [delivery] = await deliveriesTo(api, endpoint.id)
        return delivery?.status === 'succeeded' && delivery
      }, 10_000, 'the delivery to succeed')
      expect(delivered.attempts!.map((attempt) => attempt.error ?? attempt.response_status)).toEqual(['refused', 204])
      const token = new URLSearchParams(back.requests[0]!.body).get('logout_token')!
      const { payload } = await jwtVerify(token, createRemoteJWKSet(new URL(`${account.issuer}/.well-known/jwks.json`)), { issuer: account.issuer, audience: rp.clientId, currentDate: new Date(h.current.clock.now()) })
      // Signed at the retry, not when the session ended: a client can accept it however late it comes.
      expect(payload.iat).toBe(Math.floor(Date.parse(delivered.attempts![1]!.started_at) / 1000))
      expect(payload.jti).toBe(`${delivered.id}.2`)
    } finally {
      await back.close()
    }
  })

  it('gives no code for a session that ended while the sign-in waited for consent, so no client is left logged in', async () => {
    const account = await createAccount(h.current)
    const browser = new Browser()
    const first = await signedIn(account, browser, `${receiver.current.url}/first`)
    const rp = await prepareSignIn(account, { backchannel_logout_uri: `${receiver.current.url}/second` })
    const app = await LoginApp.of(account)
    const started = await browser.open(authorizationUrl(account.base, rp.clientId))
    const login = challengeIn(started.location, 'login')
    expect((await app.loginRequest(login)).body).toMatchObject({ skip: true, subject: 'user-1' })
    const consent = challengeIn((await browser.open(await app.accept('login', login, { subject: 'user-1' }))).location, 'consent')
    const request = await app.consentRequest(consent)

    expect((await call(`${account.base}/oauth/sessions?subject=user-1`, 'DELETE', { token: await managementToken(account, 'herald:sessions:write') })).status).toBe(204)
    // Ending the session closed the sign-in: the consent app can no longer answer it.
    expect((await app.answer('consent', consent, 'accept', { grant_scope: request.body.requested_scope })).status).toBe(404)
    const joined = await h.current.herald.database.db.selectFrom('session_clients').select('client_id').where('session_id', '=', first.sid).execute()
    expect(joined.map((row) => row.client_id)).toEqual([first.clientId])
  })

  describe("the client's logout endpoint", () => {
    it('goes with the client: listed, refused changes of its own, moved and removed with the client', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      const rp = await signedIn(account, new Browser(), `${receiver.current.url}/a`)
      const endpoint = (await endpointOf(api, rp.clientId))!
      expect(endpoint.url).toBe(`${receiver.current.url}/a`)

      expect((await api.patch(`/webhooks/endpoints/${endpoint.id}`, { url: 'https://example.com/x' })).status).toBe(409)
      expect((await api.delete(`/webhooks/endpoints/${endpoint.id}`)).status).toBe(409)
      expect((await api.post(`/webhooks/endpoints/${endpoint.id}/secret/rotate`, {})).status).toBe(409)
      expect((await api.post('/webhooks/subscriptions', { endpoint_id: endpoint.id, event_types: ['*'] })).status).toBe(409)
      // Its own delivery settings are the account's to tune.
      expect((await api.patch(`/webhooks/endpoints/${endpoint.id}`, { max_in_flight: 5 })).status).toBe(200)

      const moved = await api.patch(`/oauth/clients/${rp.clientId}`, { backchannel_logout_uri: `${receiver.current.url}/b` })
      expect(moved.status).toBe(200)
      expect((await endpointOf(api, rp.clientId))?.url).toBe(`${receiver.current.url}/b`)
      expect((await endpointOf(api, rp.clientId))?.id).toBe(endpoint.id)

      expect((await api.patch(`/oauth/clients/${rp.clientId}`, { backchannel_logout_uri: null })).status).toBe(200)
      expect(await endpointOf(api, rp.clientId)).toBeUndefined()
    })

    it("cancels, visibly, what a deleted client had not received", async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      receiver.current.respond = () => ({ status: 503 })
      const rp = await signedIn(account, new Browser(), receiver.current.url)
      const endpoint = (await endpointOf(api, rp.clientId))!
      expect((await call(`${account.base}/oauth/sessions?subject=user-1`, 'DELETE', { token: await managementToken(account) })).status).toBe(204)
      await eventually(async () => (await deliveriesTo(api, endpoint.id))[0]?.attempt_count === 1, 10_000, 'the first attempt')

      expect((await api.delete(`/oauth/clients/${rp.clientId}`)).status).toBe(204)
      const [cancelled] = await deliveriesTo(api, endpoint.id)
      expect(cancelled).toMatchObject({ status: 'cancelled', event_type: 'oauth.session.ended' })
    })

    it('refuses a backchannel_logout_uri Herald must not call', async () => {
      const account = await createAccount(h.current)
      const api = await webhookApi(account, h.current.clock)
      for (const uri of ['ftp://example.com/logout', 'https://example.com/logout#frag', 'https://169.254.169.254/latest', 'not a url']) {
        const created = await api.post<{ errors?: Array<{ pointer: string }> }>('/oauth/clients', {
          redirect_uris: [REDIRECT_URI],
          grant_types: ['authorization_code'],
          response_types: ['code'],
          scope: 'openid',
          backchannel_logout_uri: uri,
        })
        expect(created.status, uri).toBe(400)
        expect(created.body.errors?.map((error) => error.pointer)).toContain('/body/backchannel_logout_uri')
      }
    })
  })

  it('keeps every logout of one account away from another', async () => {
    const a = await createAccount(h.current, 'a')
    const b = await createAccount(h.current, 'b')
    const rp = await signedIn(a, new Browser(), receiver.current.url)
    const apiA = await webhookApi(a, h.current.clock)
    const apiB = await webhookApi(b, h.current.clock)
    const endpoint = (await endpointOf(apiA, rp.clientId))!
    expect(await endpointOf(apiB, rp.clientId)).toBeUndefined()
    expect((await apiB.get(`/webhooks/endpoints/${endpoint.id}`)).status).toBe(404)
    // B ending "user-1"'s sessions ends only B's, of which there are none.
    expect((await call(`${b.base}/oauth/sessions?subject=user-1`, 'DELETE', { token: await managementToken(b) })).status).toBe(204)
    await h.current.herald.webhooks.worker.runPass()
    expect(await deliveriesTo(apiA, endpoint.id)).toEqual([])
    expect(decodeProtectedHeader(rp.idToken).alg).toBe('RS256')
  })
})
