// The peer for token issuance: oidc-provider configured for the job Herald's bench does — client_credentials,
// client_secret_basic, RFC 9068 JWT access tokens signed ES256 through the resourceIndicators feature, the
// default in-memory adapter, logging off. Started as a child process by bench/tokens.mjs; prints one JSON line
// `{"ready":true,"url":…}` on stdout once it listens, and exits on SIGTERM.
//
// env: PORT, CLIENT_ID, CLIENT_SECRET, RESOURCE (the resource server's identifier), SCOPE (default orders:read)
import { generateKeyPairSync } from 'node:crypto'

const port = Number(process.env.PORT)
const { CLIENT_ID, CLIENT_SECRET, RESOURCE } = process.env
const SCOPE = process.env.SCOPE ?? 'orders:read'
if (!port || !CLIENT_ID || !CLIENT_SECRET || !RESOURCE) {
  console.error('oidc-provider peer: PORT, CLIENT_ID, CLIENT_SECRET and RESOURCE are required')
  process.exit(2)
}

// oidc-provider prints configuration advice through console.info/warn when it loads and starts; that is noise
// here (the runtime check is reported by bench/tokens.mjs instead). Errors still go to stderr.
console.info = () => {}
console.warn = () => {}
const { default: Provider } = await import('oidc-provider')

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
const signingJwk = { ...privateKey.export({ format: 'jwk' }), kid: 'bench-es256', alg: 'ES256', use: 'sig' }

const issuer = `http://127.0.0.1:${port}`
const provider = new Provider(issuer, {
  clients: [
    {
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: SCOPE,
      // Only an ES256 key is configured; the RS256 default would make the client's metadata invalid.
      id_token_signed_response_alg: 'ES256',
    },
  ],
  jwks: { keys: [signingJwk] },
  scopes: [SCOPE],
  // Herald's default access token lifetime, so both sign the same exp distance.
  ttl: { ClientCredentials: 3600 },
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

const server = provider.listen(port, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ ready: true, url: issuer, token_endpoint: `${issuer}/token` })}\n`)
})

process.once('SIGTERM', () => {
  server.close(() => process.exit(0))
  server.closeAllConnections?.()
  setTimeout(() => process.exit(0), 2000).unref()
})
