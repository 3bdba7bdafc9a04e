import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose'
import * as oidc from 'openid-client'
import { beforeAll, describe, expect, it } from 'vitest'
import { type CreatedAccount, forEachDialect, useHerald } from '../support/herald.js'
import { type ApiResponse, basicAuth, call, createAccount, managementToken } from '../support/http.js'
import { eventually } from '../support/receiver.js'
import { LoginApp, type SignInClient, discoverClient, prepareSignIn, signInThroughClient } from '../support/sign-in.js'

/** RFC 8693: the grant and the token types Herald reads and issues. */
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange'
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token'
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token'
const ORDERS_API = 'https://orders.example'
const BILLING_API = 'https://billing.example'

interface Client {
  client_id: string
  client_secret: string
}

function expectOAuthError(response: ApiResponse, status: number, error: string): void {
  expect(response.status, response.text).toBe(status)
  expect(response.body).toEqual({ error, error_description: expect.any(String) })
  expect(response.headers.get('cache-control')).toBe('no-store')
}

forEachDialect((dialect) => {
  const h = useHerald(dialect)
  let account: CreatedAccount
  let other: CreatedAccount
  let adminToken: string
  /** A machine client whose client_credentials tokens are exchanged. */
  let service: Client
  /** Clients that exchange tokens by delegation (the second also takes client_credentials, for actor tokens). */
  let gateway: Client
  let backend: Client
  let impersonator: Client
  /** Introspects, as a resource server would. */
  let resourceServer: Client
  /** A relying party user-1 signs in to: its tokens are the user's subject tokens. */
  let rp: SignInClient
  let app: LoginApp

  const createClient = async (target: CreatedAccount, metadata: Record<string, unknown>): Promise<Client> => {
    const created = await call<Client>(`${target.base}/oauth/clients`, 'POST', { token: target === account ? adminToken : await managementToken(target), json: metadata })
    expect(created.status, created.text).toBe(201)
    return created.body
  }
  const exchanger = (metadata: Record<string, unknown> = {}) =>
    createClient(account, { grant_types: [TOKEN_EXCHANGE], scope: 'orders:read orders:write', audience: [ORDERS_API, BILLING_API], ...metadata })

  const tokenRequest = (client: Client, form: Record<string, string | string[]>, target = account) =>
    call<Record<string, unknown>>(`${target.base}/oauth/tokens`, 'POST', { headers: { authorization: basicAuth(client.client_id, client.client_secret) }, form })
  const exchange = (client: Client, subjectToken: string, form: Record<string, string | string[]> = {}) =>
    tokenRequest(client, { grant_type: TOKEN_EXCHANGE, subject_token: subjectToken, subject_token_type: ACCESS_TOKEN, ...form })
  const exchanged = async (client: Client, subjectToken: string, form: Record<string, string | string[]> = {}): Promise<string> => {
    const answer = await exchange(client, subjectToken, form)
    expect(answer.status, answer.text).toBe(200)
    return answer.body.access_token as string
  }
  const clientToken = async (client: Client, target = account): Promise<string> => {
    const answer = await tokenRequest(client, { grant_type: 'client_credentials' }, target)
    expect(answer.status, answer.text).toBe(200)
    return answer.body.access_token as string
  }
  const introspect = async (token: string) => {
    const answer = await call(`${account.base}/oauth/introspect`, 'POST', { headers: { authorization: basicAuth(resourceServer.client_id, resourceServer.client_secret) }, form: { token } })
    expect(answer.status, answer.text).toBe(200)
    return answer.body
  }
  const revoke = (client: Client | SignInClient, token: string) => {
    const [id, secret] = 'clientId' in client ? [client.clientId, client.clientSecret] : [client.client_id, client.client_secret]
    return call(`${account.base}/oauth/revoke`, 'POST', { headers: { authorization: basicAuth(id, secret) }, form: { token } })
  }
  /** user-1's tokens at the relying party, with `consent`'s extras given at consent. */
  const userTokens = async (consent: Record<string, unknown> = {}) => {
    const config = await discoverClient({ account, rp })
    return (await signInThroughClient(config, app, 'user-1', { scope: 'openid offline_access orders:read', consent })).redeem()
  }
  const verify = (token: string) =>
    jwtVerify(token, createRemoteJWKSet(new URL(`${account.issuer}/.well-known/jwks.json`)), { issuer: account.issuer, typ: 'at+jwt', currentDate: new Date(h.current.clock.now()) })

  beforeAll(async () => {
    account = await createAccount(h.current, 'token-exchange')
    other = await createAccount(h.current, 'other')
    adminToken = await managementToken(account)
    for (const name of ['orders:read', 'orders:write']) {
      expect((await call(`${account.base}/oauth/scopes`, 'POST', { token: adminToken, json: { name } })).status).toBe(201)
    }
    service = await createClient(account, { grant_types: ['client_credentials'], scope: 'orders:read orders:write', audience: [ORDERS_API] })
    gateway = await exchanger()
    backend = await exchanger({ grant_types: [TOKEN_EXCHANGE, 'client_credentials'] })
    impersonator = await exchanger({ token_exchange_impersonation: true })
    resourceServer = await createClient(account, { grant_types: ['client_credentials'] })
    rp = await prepareSignIn(account, { grant_types: ['authorization_code', 'refresh_token', TOKEN_EXCHANGE], scope: 'openid offline_access orders:read', audience: [ORDERS_API] })
    app = await LoginApp.of(account)
  })

  describe('delegation', () => {
    it("issues, through openid-client, a token for the user's subject whose act names the client, verified against the JWKS", async () => {
      const user = await userTokens()
      const config = await oidc.discovery(new URL(account.issuer), gateway.client_id, undefined, oidc.ClientSecretBasic(gateway.client_secret), { execute: [oidc.allowInsecureRequests] })
      expect(config.serverMetadata().grant_types_supported).toContain(TOKEN_EXCHANGE)
      const answer = await oidc.genericGrantRequest(config, TOKEN_EXCHANGE, { subject_token: user.access_token, subject_token_type: ACCESS_TOKEN, audience: BILLING_API })
      expect(answer).toMatchObject({ token_type: 'bearer', issued_token_type: ACCESS_TOKEN, scope: 'orders:read' })
      expect(answer.refresh_token).toBeUndefined()

      const subject = decodeJwt(user.access_token)
      const { payload, protectedHeader } = await verify(answer.access_token)
      expect(protectedHeader.typ).toBe('at+jwt')
      expect(payload).toMatchObject({ sub: 'user-1', client_id: gateway.client_id, aud: BILLING_API, scope: 'orders:read', gid: subject.gid, act: { sub: gateway.client_id }, sjti: [subject.jti] })
      expect(payload.exp).toBeLessThanOrEqual(subject.exp!)
      expect(await introspect(answer.access_token)).toMatchObject({ active: true, sub: 'user-1', client_id: gateway.client_id, act: { sub: gateway.client_id } })
    })

    it("nests the subject token's own act: a delegation chain reads from the latest actor back", async () => {
      const first = await exchanged(gateway, await clientToken(service))
      const second = await exchanged(backend, first)
      const { payload } = await verify(second)
      expect(payload).toMatchObject({ sub: service.client_id, act: { sub: backend.client_id, act: { sub: gateway.client_id } } })
      const firstClaims = decodeJwt<{ sjti: string[] }>(first)
      expect(payload.sjti).toEqual([firstClaims.jti, ...firstClaims.sjti])
      expect(await introspect(second)).toMatchObject({ active: true, act: { sub: backend.client_id, act: { sub: gateway.client_id } } })
    })

    it("names the actor token's subject, and refuses an actor token of another client", async () => {
      const subject = await clientToken(service)
      const actorToken = await clientToken(backend)
      const withActor = await exchanged(backend, subject, { actor_token: actorToken, actor_token_type: ACCESS_TOKEN })
      expect(decodeJwt(withActor).act).toEqual({ sub: backend.client_id })
      expectOAuthError(await exchange(gateway, subject, { actor_token: actorToken, actor_token_type: ACCESS_TOKEN }), 400, 'invalid_request')
      expectOAuthError(await exchange(backend, subject, { actor_token: actorToken }), 400, 'invalid_request')
      expectOAuthError(await exchange(backend, subject, { actor_token_type: ACCESS_TOKEN }), 400, 'invalid_request')
    })

    it("honours may_act (RFC 8693 §4.4): only the client it names may act for the subject", async () => {
      const user = await userTokens({ session: { access_token: { may_act: { client_id: gateway.client_id } } } })
      expect(decodeJwt(user.access_token).may_act).toEqual({ client_id: gateway.client_id })
      await exchanged(gateway, user.access_token)
      expectOAuthError(await exchange(backend, user.access_token), 400, 'invalid_request')
    })

    it('exchanges an ID token only for the client it was issued to; the token then lives no longer than it', async () => {
      const user = await userTokens()
      const idToken = user.id_token!
      expectOAuthError(await exchange(gateway, idToken, { subject_token_type: ID_TOKEN }), 400, 'invalid_request')
      // An ID token is no access token, nor the other way round.
      expectOAuthError(await exchange(gateway, idToken), 400, 'invalid_request')
      expectOAuthError(await exchange(gateway, user.access_token, { subject_token_type: ID_TOKEN }), 400, 'invalid_request')

      const own = await exchanged({ client_id: rp.clientId, client_secret: rp.clientSecret }, idToken, { subject_token_type: ID_TOKEN })
      const claims = decodeJwt(own)
      expect(claims).toMatchObject({ sub: 'user-1', act: { sub: rp.clientId }, scope: 'openid offline_access orders:read' })
      expect(claims.gid).toBeUndefined()
      expect(claims.exp).toBeLessThanOrEqual(decodeJwt(idToken).exp!)
    })
  })

  describe('impersonation', () => {
    it('leaves act out only for a client registered for it', async () => {
      const subject = await clientToken(service)
      const { payload } = await verify(await exchanged(impersonator, subject))
      expect(payload.sub).toBe(service.client_id)
      expect(payload.client_id).toBe(impersonator.client_id)
      expect(payload.act).toBeUndefined()
      expect(decodeJwt(await exchanged(gateway, subject)).act).toEqual({ sub: gateway.client_id })
    })

    it('is refused at registration without the token exchange grant', async () => {
      const refused = await call(`${account.base}/oauth/clients`, 'POST', { token: adminToken, json: { grant_types: ['client_credentials'], token_exchange_impersonation: true } })
      expect(refused.status, refused.text).toBe(400)
      expect(refused.body).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/body/token_exchange_impersonation' }] })
    })
  })

  describe('ceilings', () => {
    it("grants no scope beyond the subject token's and the client's", async () => {
      const readOnly = await tokenRequest(service, { grant_type: 'client_credentials', scope: 'orders:read' })
      const subject = readOnly.body.access_token as string
      expect((await exchange(gateway, subject)).body.scope).toBe('orders:read')
      expectOAuthError(await exchange(gateway, subject, { scope: 'orders:read orders:write' }), 400, 'invalid_scope')
      const narrow = await exchanger({ scope: 'orders:write' })
      expectOAuthError(await exchange(narrow, subject, { scope: 'orders:read' }), 400, 'invalid_scope')
      expect((await exchange(narrow, subject)).body.scope).toBe('')
      // A management token's herald: scopes never pass to a client that can't hold them.
      const management = await exchange(gateway, adminToken)
      expect(management.status, management.text).toBe(200)
      expect(management.body.scope).toBe('')
      expectOAuthError(await exchange(gateway, adminToken, { scope: 'herald:clients:write' }), 400, 'invalid_scope')
    })

    it("issues only for an audience among the client's, one at a time", async () => {
      const subject = await clientToken(service)
      expect(decodeJwt(await exchanged(gateway, subject)).aud).toBe(ORDERS_API)
      expect(decodeJwt(await exchanged(gateway, subject, { resource: BILLING_API })).aud).toBe(BILLING_API)
      expectOAuthError(await exchange(gateway, subject, { audience: 'https://elsewhere.example' }), 400, 'invalid_target')
      expectOAuthError(await exchange(gateway, subject, { audience: [ORDERS_API, BILLING_API] }), 400, 'invalid_target')
      expectOAuthError(await exchange(gateway, subject, { audience: ORDERS_API, resource: BILLING_API }), 400, 'invalid_target')
    })

    it('never outlives the subject token, and refuses one that has expired', async () => {
      const brief = await createClient(account, { grant_types: ['client_credentials'], access_token_ttl: 60 })
      const subject = await clientToken(brief)
      h.current.clock.advance(45_000)
      const answer = await exchange(gateway, subject)
      expect(answer.status, answer.text).toBe(200)
      expect(answer.body.expires_in).toBeLessThanOrEqual(15)
      expect(decodeJwt(answer.body.access_token as string).exp).toBe(decodeJwt(subject).exp)
      h.current.clock.advance(15_000)
      expectOAuthError(await exchange(gateway, subject), 400, 'invalid_request')
    })
  })

  describe('revocation', () => {
    it("makes the exchanged tokens inactive with the subject's grant", async () => {
      const user = await userTokens()
      const first = await exchanged(gateway, user.access_token)
      const second = await exchanged(backend, first)
      expect((await introspect(second)).active).toBe(true)
      expect((await revoke(rp, user.refresh_token!)).status).toBe(200)
      expect(await introspect(user.access_token)).toEqual({ active: false })
      expect(await introspect(first)).toEqual({ active: false })
      expect(await introspect(second)).toEqual({ active: false })
      expectOAuthError(await exchange(gateway, user.access_token), 400, 'invalid_request')
    })

    it('makes them inactive with a revoked subject token that had no grant, down the chain', async () => {
      const subject = await clientToken(service)
      const first = await exchanged(gateway, subject)
      const second = await exchanged(impersonator, first)
      const sibling = await exchanged(gateway, await clientToken(service))
      expect((await revoke(service, subject)).status).toBe(200)
      expect(await introspect(first)).toEqual({ active: false })
      expect(await introspect(second)).toEqual({ active: false })
      expect((await introspect(sibling)).active).toBe(true)
    })
  })

  it('announces oauth.token.exchanged, without any token, where an endpoint subscribes to it', async () => {
    const exchangedEvents = () => h.current.herald.database.db.selectFrom('events').select(['type', 'data']).where('account_id', '=', account.id).where('type', '=', 'oauth.token.exchanged').execute()
    const eventOf = async (token: string) => {
      const { jti } = decodeJwt(token)
      // Written in the background, shortly after the answer.
      const found = async () => (await exchangedEvents()).map((row) => JSON.parse(row.data) as Record<string, unknown>).find((data) => data.jti === jti)
      return eventually(found, 10_000, 'the oauth.token.exchanged event')
    }
    const unheard = decodeJwt(await exchanged(gateway, await clientToken(service))).jti

    const endpoint = await call<{ id: string }>(`${account.base}/webhooks/endpoints`, 'POST', { token: adminToken, json: { url: 'https://example.com/hook' } })
    expect(endpoint.status, endpoint.text).toBe(201)
    const subscribed = await call(`${account.base}/webhooks/subscriptions`, 'POST', { token: adminToken, json: { endpoint_id: endpoint.body.id, event_types: ['oauth.token.*'] } })
    expect(subscribed.status, subscribed.text).toBe(201)
    const subject = await clientToken(service)
    const token = await exchanged(gateway, subject)
    const { jti } = decodeJwt(token)
    const event = await eventOf(token)
    // Events are written in the order recorded: the first exchange's would be there by now.
    expect((await exchangedEvents()).some((row) => row.data.includes(`"${unheard}"`)), 'no subscriber, no event').toBe(false)
    expect(event).toEqual({
      jti,
      client_id: gateway.client_id,
      subject: service.client_id,
      subject_token_type: ACCESS_TOKEN,
      subject_jti: decodeJwt(subject).jti,
      grant_id: null,
      act: { sub: gateway.client_id },
      scope: ['orders:read', 'orders:write'],
      audience: ORDERS_API,
      expires_at: new Date(decodeJwt(token).exp! * 1000).toISOString(),
    })
    expect((await exchangedEvents()).some((row) => row.data.includes(subject.split('.')[2]!) || row.data.includes(token.split('.')[2]!))).toBe(false)
  })

  describe('refusals', () => {
    it("refuses another account's tokens and clients at this account's token endpoint", async () => {
      const foreignClient = await createClient(other, { grant_types: ['client_credentials', TOKEN_EXCHANGE], scope: '' })
      const foreign = await clientToken(foreignClient, other)
      expectOAuthError(await exchange(gateway, foreign), 400, 'invalid_request')
      expectOAuthError(await exchange(foreignClient, await clientToken(service)), 401, 'invalid_client')
      // The same token is a fine subject at its own account.
      const own = await tokenRequest(foreignClient, { grant_type: TOKEN_EXCHANGE, subject_token: foreign, subject_token_type: ACCESS_TOKEN }, other)
      expect(own.status, own.text).toBe(200)
    })

    it('refuses a client not registered for the grant', async () => {
      expectOAuthError(await exchange(service, await clientToken(service)), 400, 'unauthorized_client')
    })

    it('answers garbage with a 4xx, never a 5xx', async () => {
      const subject = await clientToken(service)
      const cases: Array<Record<string, string | string[]>> = [
        { subject_token: '' },
        { subject_token_type: 'urn:x' },
        { subject_token_type: '' },
        { subject_token: 'garbage' },
        { subject_token: 'a.b.c' },
        { subject_token: `${subject}x` },
        { subject_token: 'x'.repeat(9000) },
        { subject_token: [subject, subject] },
        { subject_token: '\u0000\uffff' },
        { requested_token_type: ID_TOKEN },
        { requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token' },
        { actor_token: '' },
        { actor_token: 'garbage', actor_token_type: ACCESS_TOKEN },
        { actor_token: subject, actor_token_type: ID_TOKEN },
        { audience: '' },
        { audience: ['', ''] },
        { scope: '\u0001' },
        { scope: 'orders:read\u00e9' },
        { resource: 'not a uri' },
      ]
      for (const form of cases) {
        const answer = await exchange(gateway, subject, form)
        expect(answer.status, `${JSON.stringify(form)}: ${answer.text}`).toBeGreaterThanOrEqual(400)
        expect(answer.status, `${JSON.stringify(form)}: ${answer.text}`).toBeLessThan(500)
      }
    })
  })
})
