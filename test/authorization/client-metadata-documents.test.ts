import { exportJWK, generateKeyPair } from 'jose'
import * as oidc from 'openid-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DOCUMENT_FAILURE_BACKOFF_MS } from '../../src/authorization/client-documents/client-documents.js'
import { DOCUMENT_LIFETIME_BOUNDS_MS } from '../../src/authorization/client-documents/document-lifetime.js'
import { DocumentServer, documentFor } from '../support/client-documents.js'
import { type CreatedAccount, type TestHerald, forEachDialect, freePort, useHerald } from '../support/herald.js'
import { call, createAccount, managementToken } from '../support/http.js'
import { Browser, CONSENT_URL, LOGIN_URL, LoginApp, REDIRECT_URI, authorizationUrl, challengeIn } from '../support/sign-in.js'

async function accountWithDocuments(h: TestHerald, enabled = true): Promise<CreatedAccount & { token: string }> {
  const account = await createAccount(h)
  const token = await managementToken(account)
  const settings = await call(`${account.base}/settings`, 'PATCH', { token, json: { login_url: LOGIN_URL, consent_url: CONSENT_URL, client_id_metadata_documents: enabled } })
  expect(settings.status, settings.text).toBe(200)
  return { ...account, token }
}

/** openid-client, as the public client the document describes: it only knows its own URL. */
function discoverDocumentClient(account: CreatedAccount, clientId: string): Promise<oidc.Configuration> {
  return oidc.discovery(new URL(account.issuer), clientId, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] })
}

/** Signs user-1 in at `url` (authorize or a PAR request's), checking what the consent app learns of the client. */
async function signInAt(account: CreatedAccount, url: string, clientId: string): Promise<URL> {
  const browser = new Browser()
  const app = await LoginApp.of(account)
  const started = await browser.open(url)
  expect(started.status, started.text).toBe(302)
  const afterLogin = await browser.open(await app.accept('login', challengeIn(started.location, 'login'), { subject: 'user-1' }))
  const consent = challengeIn(afterLogin.location, 'consent')
  const request = await app.consentRequest(consent)
  expect(request.body.client).toEqual({
    client_id: clientId,
    client_name: 'Notes',
    client_uri: 'https://notes.example',
    logo_uri: 'https://notes.example/logo.png',
    policy_uri: null,
    tos_uri: null,
    source: 'metadata_document',
  })
  const callback = await browser.open(await app.accept('consent', consent, { grant_scope: request.body.requested_scope }))
  expect(callback.status, callback.text).toBe(302)
  return new URL(callback.location!)
}

/** Signs user-1 in to the client `config` describes, through authorize or PAR, and redeems the code. */
async function signInAs(account: CreatedAccount, config: oidc.Configuration, clientId: string, pushed: boolean) {
  const verifier = oidc.randomPKCECodeVerifier()
  const params = { redirect_uri: REDIRECT_URI, scope: 'openid offline_access', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state: oidc.randomState() }
  const url = pushed ? await oidc.buildAuthorizationUrlWithPAR(config, params) : oidc.buildAuthorizationUrl(config, params)
  const callback = await signInAt(account, url.href, clientId)
  return oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: params.state })
}

/** A browser's authorization request, its redirect not followed. */
function authorize(base: string, clientId: string, params: Record<string, string> = {}) {
  return call(authorizationUrl(base, clientId, params), 'GET', { redirect: 'manual' })
}

/** The token endpoint's answer to a public client redeeming a made-up code: what it thinks of the client. */
function tokenRequest(account: CreatedAccount, clientId: string) {
  return call<{ error: string; error_description: string }>(`${account.base}/oauth/tokens`, 'POST', {
    form: { grant_type: 'authorization_code', client_id: clientId, code: 'unknown', redirect_uri: REDIRECT_URI, code_verifier: 'a'.repeat(43) },
  })
}

async function listClients(account: CreatedAccount & { token: string }) {
  const list = await call<{ data: Array<{ client_id: string; source: string; client_name: string }> }>(`${account.base}/oauth/clients?limit=100`, 'GET', { token: account.token })
  expect(list.status, list.text).toBe(200)
  return list.body.data
}

forEachDialect((dialect) => {
  describe('Client ID Metadata Documents', () => {
    const h = useHerald(dialect, { env: { HERALD_WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', HERALD_WEBHOOK_ALLOW_HTTP: 'true' } })
    const documents = new DocumentServer()
    beforeAll(() => documents.start())
    afterAll(() => documents.stop())

    it('signs a user in, through authorize and through PAR, with a client that is only the URL of its document, and refreshes', async () => {
      const account = await accountWithDocuments(h.current)
      const clientId = documents.serve('/valid/client.json', documentFor(documents.url('/valid/client.json')))
      const config = await discoverDocumentClient(account, clientId)
      expect(config.serverMetadata().client_id_metadata_document_supported).toBe(true)

      for (const pushed of [false, true]) {
        const tokens = await signInAs(account, config, clientId, pushed)
        expect(tokens.claims()?.aud).toBe(clientId)
        const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!)
        expect(refreshed.access_token).toBeTruthy()
      }
      expect(documents.fetches('/valid/client.json')).toBe(1)
      expect(await listClients(account)).toContainEqual(expect.objectContaining({ client_id: clientId, source: 'metadata_document', client_name: 'Notes' }))
    })

    it('authenticates a client whose document names private_key_jwt with the keys at its jwks_uri, at PAR and the token endpoint', async () => {
      const account = await accountWithDocuments(h.current)
      const { privateKey, publicKey } = await generateKeyPair('ES256')
      const jwksUri = documents.serve('/keyed/jwks.json', { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] })
      const clientId = documents.serve('/keyed/client.json', documentFor(documents.url('/keyed/client.json'), { token_endpoint_auth_method: 'private_key_jwt', jwks_uri: jwksUri }))
      // openid-client times its assertions by the real clock: shift them onto Herald's test clock.
      const clockSkew = Math.floor((h.current.clock.now() - Date.now()) / 1000)
      const config = await oidc.discovery(new URL(account.issuer), clientId, { [oidc.clockSkew]: clockSkew }, oidc.PrivateKeyJwt({ key: privateKey, kid: 'k1' }), {
        execute: [oidc.allowInsecureRequests],
      })
      const tokens = await signInAs(account, config, clientId, true)
      expect(tokens.claims()?.aud).toBe(clientId)
      expect((await tokenRequest(account, clientId)).body).toMatchObject({ error: 'invalid_client' })
    })

    it.each([
      ['names another client_id', '/mismatch/client.json', { client_id: 'http://127.0.0.1:9/other.json' }, {}, 'has a client_id that is not its own URL'],
      ['redirects', '/redirect/client.json', '', { status: 302, headers: { location: '/valid/client.json' } }, 'answered with a redirect (302)'],
      ['is too large', '/large/client.json', { client_name: 'x'.repeat(6000) }, {}, 'is larger than 5 KiB'],
      ['fails', '/failing/client.json', 'oops', { status: 500 }, 'answered 500, not 200'],
      ['is not JSON', '/text/client.json', 'hello', {}, 'is not JSON'],
      ['names a secret', '/secret/client.json', { client_secret: 'shh' }, {}, 'must not contain client_secret'],
      ['uses a shared secret', '/basic/client.json', { token_endpoint_auth_method: 'client_secret_basic' }, {}, 'must be none or private_key_jwt'],
      ['wants client_credentials', '/machine/client.json', { grant_types: ['client_credentials'] }, {}, 'may hold only authorization_code and refresh_token'],
    ])('refuses a document that %s, on an error page, never at its redirect URIs', async (_case, path, document, init, reason) => {
      const account = await accountWithDocuments(h.current)
      const url = documents.url(path)
      documents.serve(path, typeof document === 'string' ? document : documentFor(url, document), init)
      const page = await authorize(account.base, url)
      expect(page.status).toBe(400)
      expect(page.headers.get('location')).toBeNull()
      expect(page.text).toContain(reason)
      const token = await tokenRequest(account, url)
      expect(token.status).toBe(401)
      expect(token.body).toMatchObject({ error: 'invalid_client' })
      expect(token.body.error_description).toContain(reason)
      expect(await listClients(account)).not.toContainEqual(expect.objectContaining({ client_id: url }))
    })

    it('refuses a document it cannot reach, and a client_id the draft does not allow', async () => {
      const account = await accountWithDocuments(h.current)
      const unreachable = `http://127.0.0.1:${await freePort()}/client.json`
      const page = await authorize(account.base, unreachable)
      expect(page.status).toBe(400)
      expect(page.text).toContain('could not be fetched (refused)')
      for (const [clientId, reason] of [
        [`${documents.origin}/a/../client.json`, 'must not contain . or .. path segments'],
        [`${documents.origin}/`, 'must contain a path'],
        [`${documents.origin}/client.json#me`, 'must not contain a fragment'],
        [`http://user:pw@127.0.0.1:1/client.json`, 'must not contain a username or password'],
      ] as const) {
        const refused = await authorize(account.base, clientId)
        expect(refused.status, clientId).toBe(400)
        expect(refused.text).toContain(reason)
        expect((await tokenRequest(account, clientId)).status).toBe(401)
      }
      for (const garbage of ['https://', 'http://[::1', 'https://a/%zz', `https://a/${'b'.repeat(5000)}`, 'http://127.0.0.1:0/x', 'https://a/\u0000']) {
        expect((await authorize(account.base, garbage)).status, garbage).toBe(400)
        expect((await tokenRequest(account, garbage)).status, garbage).toBe(401)
        const pushed = await call(`${account.base}/oauth/par`, 'POST', { form: { client_id: garbage, response_type: 'code', redirect_uri: REDIRECT_URI, code_challenge: 'a'.repeat(43), code_challenge_method: 'S256' } })
        expect(pushed.status, garbage).toBe(401)
      }
    })

    it('remembers a document it could not use for a few seconds, so naming it again fetches nothing', async () => {
      const account = await accountWithDocuments(h.current)
      const path = '/flaky/client.json'
      const clientId = documents.serve(path, 'oops', { status: 503 })
      expect((await authorize(account.base, clientId)).text).toContain('answered 503, not 200')
      expect(documents.fetches(path)).toBe(1)

      documents.serve(path, documentFor(clientId))
      h.current.clock.advance(DOCUMENT_FAILURE_BACKOFF_MS - 1)
      const refused = await authorize(account.base, clientId)
      expect(refused.status).toBe(400)
      expect(refused.text).toContain('answered 503, not 200')
      expect((await tokenRequest(account, clientId)).status).toBe(401)
      expect(documents.fetches(path)).toBe(0)

      h.current.clock.advance(1)
      expect((await authorize(account.base, clientId)).status).toBe(302)
      expect(documents.fetches(path)).toBe(1)
    })

    it('keeps a document for as long as its caching headers say, within bounds, and then fetches it again', async () => {
      const account = await accountWithDocuments(h.current)
      const path = '/cached/client.json'
      const clientId = documents.serve(path, documentFor(documents.url(path)), { headers: { 'cache-control': 'max-age=300' } })
      await Promise.all([1, 2, 3].map(() => h.current.herald.clientLookup.find(account.id, clientId)))
      expect(documents.fetches(path)).toBe(1)
      expect((await authorize(account.base, clientId)).status).toBe(302)
      expect(documents.fetches(path)).toBe(1)
      // Served from the in-process caches, as the token endpoint needs: no fetch, no database read, not even a promise.
      expect(h.current.herald.clientLookup.find(account.id, clientId)).not.toBeInstanceOf(Promise)

      documents.serve(path, documentFor(clientId, { client_name: 'Notes 2' }))
      h.current.clock.advanceSeconds(299)
      expect((await authorize(account.base, clientId)).status).toBe(302)
      expect(documents.fetches(path)).toBe(0)
      h.current.clock.advanceSeconds(1)
      expect((await authorize(account.base, clientId)).status).toBe(302)
      expect(documents.fetches(path)).toBe(1)
      expect(await listClients(account)).toContainEqual(expect.objectContaining({ client_id: clientId, client_name: 'Notes 2' }))

      // No caching headers now: the floor of a minute.
      documents.serve(path, documentFor(clientId, { client_name: 'Notes 3' }))
      h.current.clock.advance(DOCUMENT_LIFETIME_BOUNDS_MS.minimum - 1)
      await h.current.herald.clientLookup.find(account.id, clientId)
      expect(documents.fetches(path)).toBe(0)
      h.current.clock.advance(1)
      await h.current.herald.clientLookup.find(account.id, clientId)
      expect(documents.fetches(path)).toBe(1)
    })

    it("treats such a client_id as unknown while the account's setting is off, and says so in discovery", async () => {
      const account = await accountWithDocuments(h.current, false)
      const path = '/off/client.json'
      const clientId = documents.serve(path, documentFor(documents.url(path)))
      const metadata = await call(`${account.issuer}/.well-known/openid-configuration`, 'GET')
      expect(metadata.body.client_id_metadata_document_supported).toBe(false)
      const page = await authorize(account.base, clientId)
      expect(page.status).toBe(400)
      expect(page.text).toContain('client_id does not name a client of this account')
      expect((await tokenRequest(account, clientId)).body).toMatchObject({ error: 'invalid_client' })
      expect(documents.fetches(path)).toBe(0)
    })

    it("keeps one account's client apart from another's of the same URL, and one account's setting from enabling another", async () => {
      const [first, second, off] = [await accountWithDocuments(h.current), await accountWithDocuments(h.current), await accountWithDocuments(h.current, false)]
      const path = '/shared/client.json'
      const clientId = documents.serve(path, documentFor(documents.url(path)))
      for (const account of [first, second]) expect((await authorize(account.base, clientId)).status).toBe(302)
      expect(documents.fetches(path)).toBe(2)
      for (const account of [first, second]) expect((await listClients(account)).filter((client) => client.client_id === clientId)).toHaveLength(1)

      // The management API names it by its URL, percent-encoded; another account's base doesn't know it.
      const clientPath = (account: CreatedAccount) => `${account.base}/oauth/clients/${encodeURIComponent(clientId)}`
      expect((await call(clientPath(first), 'GET', { token: first.token })).body).toMatchObject({ client_id: clientId, source: 'metadata_document' })
      expect((await call(clientPath(off), 'GET', { token: off.token })).status).toBe(404)
      const changed = await call(clientPath(first), 'PATCH', { token: first.token, json: { skip_consent: true } })
      expect(changed.status, changed.text).toBe(409)
      expect((await call(clientPath(first), 'DELETE', { token: first.token })).status).toBe(204)
      expect((await call(clientPath(second), 'GET', { token: second.token })).status).toBe(200)

      expect((await authorize(off.base, clientId)).status).toBe(400)
      expect(await listClients(off)).not.toContainEqual(expect.objectContaining({ client_id: clientId }))
      expect((await tokenRequest(off, clientId)).body).toMatchObject({ error: 'invalid_client' })
    })

    it('answers a redirect_uri the document does not list on the error page', async () => {
      const account = await accountWithDocuments(h.current)
      const path = '/strict/client.json'
      const clientId = documents.serve(path, documentFor(documents.url(path)))
      const page = await authorize(account.base, clientId, { redirect_uri: 'https://evil.example/callback' })
      expect(page.status).toBe(400)
      expect(page.text).toContain('redirect_uri is not registered for this client')
    })
  })
})
