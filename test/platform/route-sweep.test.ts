import { describe, expect, it } from 'vitest'
import { type CreatedAccount, forEachDialect, OPERATOR_TOKEN, type TestHerald, useHerald } from '../support/herald.js'
import { basicAuth, call, createAccount, managementToken } from '../support/http.js'
import { Browser, LoginApp, authorizationUrl, challengeIn, prepareSignIn, redeemCode, signIn } from '../support/sign-in.js'
import { LOCAL_DELIVERY } from '../webhooks/support.js'
import { prepareDevice, startDevice } from '../support/device.js'

interface Operation {
  method: string
  path: string
}

/** The ids of one account's resources, by the path parameter that names them, and what sign-in routes need. */
type Fixture = Record<
  | 'accountId'
  | 'clientId'
  | 'name'
  | 'kid'
  | 'endpointId'
  | 'subscriptionId'
  | 'eventId'
  | 'deliveryId'
  | 'jobId'
  | 'loginChallenge'
  | 'loginChallengeToReject'
  | 'consentChallenge'
  | 'consentChallengeToReject'
  | 'logoutChallenge'
  | 'logoutChallengeToReject'
  | 'rpClientId'
  | 'rpClientSecret'
  | 'userToken'
  | 'consoleLinkCode'
  | 'deviceClientId'
  | 'deviceUserCode'
  | 'deviceChallenge'
  | 'deviceChallengeToReject'
  | 'initialAccessToken'
  | 'registrationTokenId'
  | 'registeredClientId'
  | 'registrationAccessToken',
  string
>

/** How each route is called: the credentials it takes and a body it accepts. Every route of the document needs one. */
interface Sample {
  /**
   * `rp`: the account's relying party (a sign-in client); `user`: a user's access token; `initial`: an initial access
   * token (RFC 7591); `registration`: a registered client's registration access token (RFC 7592).
   */
  auth: 'management' | 'client' | 'rp' | 'user' | 'operator' | 'initial' | 'registration' | 'none'
  json?: (ids: Fixture) => unknown
  form?: (ids: Fixture, token: string) => Record<string, string>
  query?: (ids: Fixture) => Record<string, string>
  /** Path parameters that this route takes from other fixtures than their names say. */
  params?: (ids: Fixture) => Record<string, string>
  /** Its body names a resource by id, as its path may. */
  bodyIds?: boolean
  /** The status of a call with the account's own ids, when it is not a 2xx (a redirect). */
  status?: number
  /** The status of a call with another account's ids, when it is not 404 (RFC 7592 §2.1 answers an unknown client 401). */
  foreignStatus?: number
}

/** An authorization request of the account's relying party, with the fixed PKCE challenge. */
const authorizeQuery = (ids: Fixture) => Object.fromEntries(new URL(authorizationUrl('http://x', ids.rpClientId)).searchParams)

const RECEIVER = 'http://127.0.0.1:9/hook'

const SAMPLES: Record<string, Sample> = {
  'GET /healthz': { auth: 'none' },
  'GET /readyz': { auth: 'none' },
  'GET /openapi.json': { auth: 'none' },
  'POST /accounts': { auth: 'operator', json: () => ({ name: 'swept' }) },
  'GET /accounts': { auth: 'operator' },
  'GET /accounts/{accountId}': { auth: 'operator' },
  'PATCH /accounts/{accountId}': { auth: 'operator', json: () => ({ status: 'active' }) },
  'POST /accounts/{accountId}/console-links': { auth: 'operator', json: () => ({ scope: 'herald:webhooks:read' }) },
  'GET /accounts/{accountId}/webhooks/endpoints/{endpointId}/stats': { auth: 'management', query: () => ({ bucket: 'day' }) },
  'POST /accounts/{accountId}/console-links/exchange': { auth: 'none', json: (ids) => ({ code: ids.consoleLinkCode }) },
  'GET /.well-known/oauth-authorization-server/accounts/{accountId}': { auth: 'none' },
  'GET /accounts/{accountId}/.well-known/jwks.json': { auth: 'none' },
  'GET /accounts/{accountId}/.well-known/openid-configuration': { auth: 'none' },
  'GET /accounts/{accountId}/.well-known/oauth-authorization-server': { auth: 'none' },
  'GET /accounts/{accountId}/keys': { auth: 'management' },
  'POST /accounts/{accountId}/keys/rotate': { auth: 'management' },
  'POST /accounts/{accountId}/keys/{kid}/revoke': { auth: 'management' },
  'POST /accounts/{accountId}/oauth/tokens': { auth: 'client', form: () => ({ grant_type: 'client_credentials' }) },
  'POST /accounts/{accountId}/oauth/introspect': { auth: 'client', form: (_ids, token) => ({ token }) },
  'POST /accounts/{accountId}/oauth/revoke': { auth: 'client', form: () => ({ token: 'not-a-token-of-this-account' }) },
  'GET /accounts/{accountId}/settings': { auth: 'management' },
  'PATCH /accounts/{accountId}/settings': { auth: 'management', json: () => ({ access_token_ttl: 900 }) },
  'POST /accounts/{accountId}/oauth/scopes': { auth: 'management', json: () => ({ name: 'swept:new', description: 'made by the sweep' }) },
  'GET /accounts/{accountId}/oauth/scopes': { auth: 'management' },
  'GET /accounts/{accountId}/oauth/scopes/{name}': { auth: 'management' },
  'PATCH /accounts/{accountId}/oauth/scopes/{name}': { auth: 'management', json: () => ({ description: 'changed by the sweep' }) },
  'DELETE /accounts/{accountId}/oauth/scopes/{name}': { auth: 'management' },
  'POST /accounts/{accountId}/oauth/clients': { auth: 'management', json: () => ({ client_name: 'swept', grant_types: ['client_credentials'], scope: 'swept:read' }) },
  'GET /accounts/{accountId}/oauth/clients': { auth: 'management' },
  'GET /accounts/{accountId}/oauth/clients/{clientId}': { auth: 'management' },
  'PATCH /accounts/{accountId}/oauth/clients/{clientId}': { auth: 'management', json: () => ({ client_name: 'renamed by the sweep' }) },
  'DELETE /accounts/{accountId}/oauth/clients/{clientId}': { auth: 'management' },
  'POST /accounts/{accountId}/oauth/clients/{clientId}/secret': { auth: 'management' },
  'POST /accounts/{accountId}/webhooks/endpoints': { auth: 'management', json: () => ({ url: RECEIVER }) },
  'GET /accounts/{accountId}/webhooks/endpoints': { auth: 'management' },
  'GET /accounts/{accountId}/webhooks/endpoints/{endpointId}': { auth: 'management' },
  'PATCH /accounts/{accountId}/webhooks/endpoints/{endpointId}': { auth: 'management', json: () => ({ description: 'changed by the sweep', status: 'disabled' }) },
  'DELETE /accounts/{accountId}/webhooks/endpoints/{endpointId}': { auth: 'management' },
  'GET /accounts/{accountId}/webhooks/endpoints/{endpointId}/secret': { auth: 'management' },
  'POST /accounts/{accountId}/webhooks/endpoints/{endpointId}/secret/rotate': { auth: 'management', json: () => ({ overlap_seconds: 60 }) },
  'POST /accounts/{accountId}/webhooks/endpoints/{endpointId}/recover': { auth: 'management', json: () => ({ since: '2020-01-01T00:00:00Z' }) },
  'POST /accounts/{accountId}/webhooks/endpoints/{endpointId}/test': { auth: 'management' },
  'GET /accounts/{accountId}/webhooks/jobs/{jobId}': { auth: 'management' },
  'POST /accounts/{accountId}/webhooks/subscriptions': { auth: 'management', json: (ids) => ({ endpoint_id: ids.endpointId, event_types: ['swept.*'] }), bodyIds: true },
  'GET /accounts/{accountId}/webhooks/subscriptions': { auth: 'management' },
  'GET /accounts/{accountId}/webhooks/subscriptions/{subscriptionId}': { auth: 'management' },
  'DELETE /accounts/{accountId}/webhooks/subscriptions/{subscriptionId}': { auth: 'management' },
  'POST /accounts/{accountId}/webhooks/events': { auth: 'management', json: () => ({ type: 'swept.happened', data: { n: 1 }, idempotency_key: 'sweep-1' }) },
  'GET /accounts/{accountId}/webhooks/events': { auth: 'management' },
  'GET /accounts/{accountId}/webhooks/events/{eventId}': { auth: 'management' },
  'GET /accounts/{accountId}/webhooks/event-types': { auth: 'management' },
  'GET /accounts/{accountId}/webhooks/deliveries': { auth: 'management' },
  'GET /accounts/{accountId}/webhooks/deliveries/{deliveryId}': { auth: 'management' },
  'POST /accounts/{accountId}/webhooks/deliveries/{deliveryId}/retry': { auth: 'management' },
  'GET /accounts/{accountId}/oauth/authorize': { auth: 'none', query: authorizeQuery, status: 302 },
  'POST /accounts/{accountId}/oauth/authorize': { auth: 'none', form: authorizeQuery, status: 303 },
  'POST /accounts/{accountId}/oauth/par': { auth: 'rp', form: authorizeQuery, status: 201 },
  'POST /accounts/{accountId}/oauth/device_authorization': { auth: 'none', form: (ids) => ({ client_id: ids.deviceClientId }) },
  'GET /accounts/{accountId}/oauth/device': { auth: 'none', status: 302 },
  'GET /accounts/{accountId}/oauth/device-requests/{challenge}': { auth: 'management', params: (ids) => ({ challenge: ids.deviceChallenge }) },
  'POST /accounts/{accountId}/oauth/device-requests/{challenge}/accept': { auth: 'management', params: (ids) => ({ challenge: ids.deviceChallenge }), json: (ids) => ({ user_code: ids.deviceUserCode }) },
  'POST /accounts/{accountId}/oauth/device-requests/{challenge}/reject': { auth: 'management', params: (ids) => ({ challenge: ids.deviceChallengeToReject }), json: () => ({}) },
  'POST /accounts/{accountId}/oauth/registration-tokens': { auth: 'management', json: () => ({ max_uses: 2 }) },
  'GET /accounts/{accountId}/oauth/registration-tokens': { auth: 'management' },
  'DELETE /accounts/{accountId}/oauth/registration-tokens/{tokenId}': { auth: 'management', params: (ids) => ({ tokenId: ids.registrationTokenId }) },
  'POST /accounts/{accountId}/oauth/register': { auth: 'initial', json: () => ({ redirect_uris: ['https://swept.example/callback'] }) },
  'GET /accounts/{accountId}/oauth/register/{clientId}': { auth: 'registration', params: (ids) => ({ clientId: ids.registeredClientId }), foreignStatus: 401 },
  'PUT /accounts/{accountId}/oauth/register/{clientId}': {
    auth: 'registration',
    params: (ids) => ({ clientId: ids.registeredClientId }),
    json: (ids) => ({ client_id: ids.registeredClientId, redirect_uris: ['https://swept.example/other'] }),
    foreignStatus: 401,
  },
  'DELETE /accounts/{accountId}/oauth/register/{clientId}': { auth: 'registration', params: (ids) => ({ clientId: ids.registeredClientId }), foreignStatus: 401 },
  'GET /accounts/{accountId}/oauth/userinfo': { auth: 'user' },
  'POST /accounts/{accountId}/oauth/userinfo': { auth: 'user' },
  'GET /accounts/{accountId}/oauth/login-requests/{challenge}': { auth: 'management', params: (ids) => ({ challenge: ids.loginChallenge }) },
  'POST /accounts/{accountId}/oauth/login-requests/{challenge}/accept': { auth: 'management', params: (ids) => ({ challenge: ids.loginChallenge }), json: () => ({ subject: 'swept' }) },
  'POST /accounts/{accountId}/oauth/login-requests/{challenge}/reject': { auth: 'management', params: (ids) => ({ challenge: ids.loginChallengeToReject }), json: () => ({ error: 'access_denied' }) },
  'GET /accounts/{accountId}/oauth/consent-requests/{challenge}': { auth: 'management', params: (ids) => ({ challenge: ids.consentChallenge }) },
  'POST /accounts/{accountId}/oauth/consent-requests/{challenge}/accept': { auth: 'management', params: (ids) => ({ challenge: ids.consentChallenge }), json: () => ({ grant_scope: ['openid'] }) },
  'GET /accounts/{accountId}/oauth/logout': { auth: 'none', status: 302 },
  'POST /accounts/{accountId}/oauth/logout': { auth: 'none', form: () => ({ state: 'x' }), status: 303 },
  'GET /accounts/{accountId}/oauth/logout-requests/{challenge}': { auth: 'management', params: (ids) => ({ challenge: ids.logoutChallenge }) },
  'POST /accounts/{accountId}/oauth/logout-requests/{challenge}/accept': { auth: 'management', params: (ids) => ({ challenge: ids.logoutChallenge }) },
  'POST /accounts/{accountId}/oauth/logout-requests/{challenge}/reject': { auth: 'management', params: (ids) => ({ challenge: ids.logoutChallengeToReject }) },
  'GET /accounts/{accountId}/oauth/sessions': { auth: 'management', query: () => ({ subject: 'swept' }) },
  'DELETE /accounts/{accountId}/oauth/sessions': { auth: 'management', query: () => ({ subject: 'swept' }), status: 204 },
  'GET /accounts/{accountId}/oauth/consents': { auth: 'management', query: () => ({ subject: 'swept' }) },
  'DELETE /accounts/{accountId}/oauth/consents': { auth: 'management', query: () => ({ subject: 'swept' }), status: 204 },
  'POST /accounts/{accountId}/oauth/consent-requests/{challenge}/reject': { auth: 'management', params: (ids) => ({ challenge: ids.consentChallengeToReject }), json: () => ({ error: 'access_denied' }) },
}

/**
 * Deleting comes last, so that every other route still finds what it names, and revoking a key after that: the
 * sweep's management token is signed with it.
 */
function rank({ method, path }: Operation): number {
  if (path.endsWith('/keys/{kid}/revoke')) return 3
  if (method === 'DELETE') return path.includes('{endpointId}') ? 2 : 1
  return 0
}

async function operationsOf(h: TestHerald): Promise<Operation[]> {
  const document = await call<{ paths: Record<string, Record<string, unknown>> }>(`${h.origin}/openapi.json`, 'GET')
  const operations = Object.entries(document.body.paths).flatMap(([path, item]) => Object.keys(item).map((method) => ({ method: method.toUpperCase(), path })))
  return operations.sort((a, b) => rank(a) - rank(b))
}

/** An account with one resource of every kind, and a token for its management API. */
async function furnished(h: TestHerald, name: string): Promise<{ account: CreatedAccount; token: string; ids: Fixture }> {
  const account = await createAccount(h, name)
  const token = await managementToken(account)
  const api = async (method: string, path: string, json?: unknown) => {
    const response = await call<Record<string, unknown>>(`${account.base}${path}`, method, { token, ...(json !== undefined && { json }) })
    expect(response.status, `${method} ${path}: ${response.text}`).toBeLessThan(300)
    return response.body
  }
  await api('POST', '/oauth/scopes', { name: 'swept:read' })
  // Scopes are named, not numbered: the spare one's name is the account's own, so the other account has none of it.
  await api('POST', '/oauth/scopes', { name: `${name}:spare` })
  const client = await api('POST', '/oauth/clients', { client_name: 'spare', grant_types: ['client_credentials'], scope: 'swept:read' })
  const endpoint = await api('POST', '/webhooks/endpoints', { url: RECEIVER })
  const subscription = await api('POST', '/webhooks/subscriptions', { endpoint_id: endpoint.id, event_types: ['*'] })
  const event = await api('POST', '/webhooks/events', { type: 'swept.happened', data: {} })
  const deliveries = (await api('GET', '/webhooks/deliveries')) as { data: Array<{ id: string }> }
  const job = await api('POST', `/webhooks/endpoints/${String(endpoint.id)}/recover`, { since: '2020-01-01T00:00:00Z' })
  const keys = (await api('GET', '/keys')) as { data: Array<{ kid: string }> }
  const rp = await prepareSignIn(account)
  const app = await LoginApp.of(account)
  const loginChallenge = async () => {
    const url = authorizationUrl(account.base, rp.clientId)
    const browser = new Browser()
    return { browser, challenge: challengeIn((await browser.open(url)).location, 'login') }
  }
  const consentChallenge = async () => {
    const { browser, challenge } = await loginChallenge()
    return challengeIn((await browser.open(await app.accept('login', challenge, { subject: 'swept' }))).location, 'consent')
  }
  const userToken = await signedInUserToken(account.base, rp, app)
  await api('PATCH', '/settings', { logout_url: 'https://login.example/logout' })
  const logoutChallenge = async () => new URL((await new Browser().open(`${account.base}/oauth/logout`)).location!).searchParams.get('logout_challenge')!
  const device = await prepareDevice(account)
  await api('PATCH', '/settings', { registration: 'initial_access_token' })
  const registrationToken = await api('POST', '/oauth/registration-tokens', { max_uses: 5 })
  const registered = await call<Record<string, unknown>>(`${account.base}/oauth/register`, 'POST', { token: String(registrationToken.token), json: { redirect_uris: ['https://swept.example/callback'] } })
  expect(registered.status, registered.text).toBe(201)
  const deviceChallenge = async () => new URL((await new Browser().open(`${account.base}/oauth/device`)).location!).searchParams.get('device_challenge')!
  const ids = {
    accountId: account.id,
    clientId: String(client.client_id),
    name: `${name}:spare`,
    kid: keys.data[0]!.kid,
    endpointId: String(endpoint.id),
    subscriptionId: String(subscription.id),
    eventId: String(event.id),
    deliveryId: deliveries.data[0]!.id,
    jobId: String(job.id),
    loginChallenge: (await loginChallenge()).challenge,
    loginChallengeToReject: (await loginChallenge()).challenge,
    consentChallenge: await consentChallenge(),
    consentChallengeToReject: await consentChallenge(),
    logoutChallenge: await logoutChallenge(),
    logoutChallengeToReject: await logoutChallenge(),
    rpClientId: rp.clientId,
    rpClientSecret: rp.clientSecret,
    userToken,
    consoleLinkCode: await consoleLinkCode(h, account.id),
    deviceClientId: device.clientId,
    deviceUserCode: (await startDevice(device)).user_code,
    deviceChallenge: await deviceChallenge(),
    deviceChallengeToReject: await deviceChallenge(),
    initialAccessToken: String(registrationToken.token),
    registrationTokenId: String(registrationToken.id),
    registeredClientId: String(registered.body.client_id),
    registrationAccessToken: String(registered.body.registration_access_token),
  }
  return { account, token, ids }
}

/** The code of a console sign-in link to the account. */
async function consoleLinkCode(h: TestHerald, accountId: string): Promise<string> {
  const link = await call<{ url: string }>(`${h.origin}/accounts/${accountId}/console-links`, 'POST', { token: OPERATOR_TOKEN, json: {} })
  expect(link.status, link.text).toBe(201)
  return new URLSearchParams(new URL(link.body.url).hash.slice(1)).get('link')!
}

/** A user's access token, from a whole sign-in of the relying party. */
async function signedInUserToken(base: string, rp: { clientId: string; clientSecret: string }, app: LoginApp): Promise<string> {
  const callback = await signIn(new Browser(), app, authorizationUrl(base, rp.clientId), 'swept')
  const tokens = await redeemCode<{ access_token: string }>(base, rp, callback)
  expect(tokens.status, tokens.text).toBe(200)
  return tokens.body.access_token
}

function urlOf(h: TestHerald, operation: Operation, ids: Fixture): string {
  const sample = SAMPLES[`${operation.method} ${operation.path}`]
  const values: Partial<Record<string, string>> = { ...ids, ...sample?.params?.(ids) }
  const path = operation.path.replace(/\{(\w+)\}/g, (_whole, param: string) => encodeURIComponent(values[param] ?? `no-${param}`))
  return h.origin + path + (sample?.query ? `?${new URLSearchParams(sample.query(ids))}` : '')
}

async function send(h: TestHerald, operation: Operation, ids: Fixture, account: CreatedAccount, token: string) {
  const sample = SAMPLES[`${operation.method} ${operation.path}`]!
  const headers: Record<string, string> = {}
  if (sample.auth === 'client') headers.authorization = basicAuth(account.clientId, account.clientSecret)
  if (sample.auth === 'rp') headers.authorization = basicAuth(ids.rpClientId, ids.rpClientSecret)
  const bearers: Partial<Record<Sample['auth'], string>> = {
    management: token,
    operator: OPERATOR_TOKEN,
    user: ids.userToken,
    initial: ids.initialAccessToken,
    registration: ids.registrationAccessToken,
  }
  const bearer = bearers[sample.auth]
  return call(urlOf(h, operation, ids), operation.method, {
    headers,
    redirect: 'manual',
    ...(bearer !== undefined && { token: bearer }),
    ...(sample.json && { json: sample.json(ids) }),
    ...(sample.form && { form: sample.form(ids, token) }),
  })
}

/**
 * Every route of the OpenAPI document, called once with another account's ids under the caller's own base and once
 * with its own, while every statement Herald sends is checked for its account (see auditTenancy): a statement that
 * reaches a tenant table without naming the account fails the sweep, whichever route sent it.
 */
forEachDialect((dialect) => {
  describe('a sweep of every route', () => {
    const herald = useHerald(dialect, { ...LOCAL_DELIVERY, worker: false })

    it('has a sample request for every route in the OpenAPI document', async () => {
      const missing = (await operationsOf(herald.current)).map(({ method, path }) => `${method} ${path}`).filter((name) => !(name in SAMPLES))
      expect(missing).toEqual([])
    })

    it('sends no statement to a tenant table without its account, and answers 404 for another account’s ids', async () => {
      const h = herald.current
      const a = await furnished(h, 'sweeper')
      const b = await furnished(h, 'swept')
      const operations = await operationsOf(h)
      // Finished, so that retrying it reaches its writes (no worker runs here to finish it).
      await h.herald.database.db.updateTable('webhook_deliveries').set({ status: 'failed', next_attempt_at: null, finished_at: h.clock.now() }).where('id', '=', a.ids.deliveryId).execute()
      const checkedBefore = h.tenancy.checked
      for (const operation of operations) {
        const pathIds = operation.path.match(/\{(\w+)\}/g)?.filter((param) => param !== '{accountId}') ?? []
        const takesIds = pathIds.length > 0 || SAMPLES[`${operation.method} ${operation.path}`]?.bodyIds === true
        if (!takesIds || !operation.path.startsWith('/accounts/{accountId}/')) continue
        const response = await send(h, operation, { ...b.ids, accountId: a.ids.accountId }, a.account, a.token)
        const foreign = SAMPLES[`${operation.method} ${operation.path}`]?.foreignStatus ?? 404
        expect(response.status, `${operation.method} ${operation.path} with the other account's ids: ${response.text}`).toBe(foreign)
      }
      for (const operation of operations) {
        const response = await send(h, operation, a.ids, a.account, a.token)
        const expected = SAMPLES[`${operation.method} ${operation.path}`]?.status
        if (expected === undefined) expect(response.status, `${operation.method} ${operation.path}: ${response.text}`).toBeLessThan(300)
        else expect(response.status, `${operation.method} ${operation.path}: ${response.text}`).toBe(expected)
      }
      expect(h.tenancy.checked - checkedBefore).toBeGreaterThan(operations.length)
      expect(h.tenancy.violations).toEqual([])
    })
  })
})
