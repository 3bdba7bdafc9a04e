import { ASSERTION_SIGNING_ALGS } from '../token/client-assertion.js'
import { GRANTS } from '../token/grants.js'

/**
 * The authorization server metadata (RFC 8414 §2; OpenID Connect Discovery §3). It lists only what Herald
 * implements today: no authorization endpoint yet, so no response types and no ID token algorithms.
 */
export function serverMetadata(issuer: string): Record<string, unknown> {
  // One client authentication for every endpoint: see ClientAuthentication.
  const authMethods = ['client_secret_basic', 'client_secret_post', 'private_key_jwt']
  const signingAlgs = [...ASSERTION_SIGNING_ALGS]
  return {
    issuer,
    token_endpoint: `${issuer}/oauth/tokens`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    introspection_endpoint: `${issuer}/oauth/introspect`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    grant_types_supported: Object.keys(GRANTS),
    response_types_supported: [],
    token_endpoint_auth_methods_supported: authMethods,
    token_endpoint_auth_signing_alg_values_supported: signingAlgs,
    introspection_endpoint_auth_methods_supported: authMethods,
    introspection_endpoint_auth_signing_alg_values_supported: signingAlgs,
    revocation_endpoint_auth_methods_supported: authMethods,
    revocation_endpoint_auth_signing_alg_values_supported: signingAlgs,
    scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
  }
}
