// The peer for token issuance and sign-in: oidc-provider configured for the jobs Herald's benches do, with the
// default in-memory adapter and logging off. Started as a child process by bench/tokens.mjs and bench/code-flow.mjs;
// prints one JSON line `{"ready":true,"url":…}` on stdout once it listens, and exits on SIGTERM.
//
//   tokens      client_credentials, client_secret_basic, RFC 9068 JWT access tokens signed ES256 through the
//               resourceIndicators feature
//   code flow   with REDIRECT_URI, the same client may also use the authorization code flow (PKCE S256,
//               client_secret_basic, RS256 ID tokens as Herald signs by default). Its login and consent app runs in
//               this process, as oidc-provider has it: GET /interaction/:uid reads the interaction
//               (interactionDetails) and finishes it at once (interactionFinished) — a login for the authorization
//               request's login_hint, then a consent that saves a Grant of the scopes asked for
//   refresh     with REFRESH=1 as well, the client may also refresh (offline_access, which oidc-provider grants only
//               to an authorization request with prompt=consent), and every refresh rotates the refresh token
//               (rotateRefreshToken), as Herald's always does
//
// env: PORT, CLIENT_ID, CLIENT_SECRET, RESOURCE (the resource server's identifier), SCOPE (default orders:read),
//      REDIRECT_URI (optional: enables the code flow), REFRESH (optional, with REDIRECT_URI: enables refresh)
import { generateKeyPairSync } from 'node:crypto'
import { createServer } from 'node:http'

const port = Number(process.env.PORT)
const { CLIENT_ID, CLIENT_SECRET, RESOURCE, REDIRECT_URI } = process.env
const REFRESH = Boolean(REDIRECT_URI) && process.env.REFRESH === '1'
const SCOPE = process.env.SCOPE ?? 'orders:read'
if (!port || !CLIENT_ID || !CLIENT_SECRET || !RESOURCE) {
  console.error('oidc-provider peer: PORT, CLIENT_ID, CLIENT_SECRET and RESOURCE are required')
  process.exit(2)
}

// oidc-provider prints configuration advice through console.info/warn when it loads and starts; that is noise
// here (the runtime check is reported by the benches instead). Errors still go to stderr.
console.info = () => {}
console.warn = () => {}
const { default: Provider } = await import('oidc-provider')

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
const keys = [{ ...privateKey.export({ format: 'jwk' }), kid: 'bench-es256', alg: 'ES256', use: 'sig' }]
if (REDIRECT_URI) {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
  keys.push({ ...rsa.privateKey.export({ format: 'jwk' }), kid: 'bench-rs256', alg: 'RS256', use: 'sig' })
}

const issuer = `http://127.0.0.1:${port}`
const provider = new Provider(issuer, {
  clients: [
    {
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      grant_types: ['client_credentials', ...(REDIRECT_URI ? ['authorization_code'] : []), ...(REFRESH ? ['refresh_token'] : [])],
      response_types: REDIRECT_URI ? ['code'] : [],
      redirect_uris: REDIRECT_URI ? [REDIRECT_URI] : [],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: REDIRECT_URI ? `openid profile email${REFRESH ? ' offline_access' : ''} ${SCOPE}` : SCOPE,
      // Without the code flow only an ES256 key is configured; the RS256 default would make the metadata invalid.
      id_token_signed_response_alg: REDIRECT_URI ? 'RS256' : 'ES256',
    },
  ],
  jwks: { keys },
  // offline_access among the scopes is what enables the refresh_token grant.
  scopes: REFRESH ? [SCOPE, 'offline_access'] : [SCOPE],
  // The scopes Herald has in every account: oidc-provider derives OIDC scopes from the claims they release.
  claims: { openid: ['sub'], profile: ['name'], email: ['email', 'email_verified'] },
  // Herald rotates on every refresh; oidc-provider's default rotates only for some clients and lifetimes.
  rotateRefreshToken: REFRESH,
  // Herald's default access token lifetime, so both sign the same exp distance.
  ttl: { ClientCredentials: 3600, AccessToken: 3600 },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => RESOURCE,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope: SCOPE,
        accessTokenTTL: 3600,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
})

// A failure the HTTP status does not show is still a failure: make it visible.
provider.on('server_error', (_ctx, error) => console.error('oidc-provider server_error:', error))

/** Finishes the interaction at once: the login of the request's login_hint, then consent to every scope asked. */
async function interact(req, res) {
  const { prompt, params, session, grantId } = await provider.interactionDetails(req, res)
  if (prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: params.login_hint } }, { mergeWithLastSubmission: false })
    return
  }
  if (prompt.name !== 'consent') throw new Error(`unexpected prompt ${prompt.name}`)
  const grant = grantId ? await provider.Grant.find(grantId) : new provider.Grant({ accountId: session.accountId, clientId: params.client_id })
  const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = prompt.details
  if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(' '))
  if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims)
  for (const [indicator, scopes] of Object.entries(missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '))
  await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true })
}

const callback = provider.callback()
const server = createServer((req, res) => {
  if (!REDIRECT_URI || !req.url.startsWith('/interaction/')) return callback(req, res)
  interact(req, res).catch((error) => {
    console.error('oidc-provider peer interaction:', error)
    res.statusCode = 500
    res.end(String(error.message))
  })
})
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(
    `${JSON.stringify({ ready: true, url: issuer, token_endpoint: `${issuer}/token`, authorization_endpoint: `${issuer}/auth` })}\n`,
  )
})

process.once('SIGTERM', () => {
  server.close(() => process.exit(0))
  server.closeAllConnections?.()
  setTimeout(() => process.exit(0), 2000).unref()
})
