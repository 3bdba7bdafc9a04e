import { GRANTS } from '../token/grants.js'

/**
 * The authorization server metadata (RFC 8414 §2; OpenID Connect Discovery §3). It lists only what Herald
 * implements today: no authorization endpoint yet, so no response types and no ID token algorithms.
 */
export function serverMetadata(issuer: string): Record<string, unknown> {
  return {
    issuer,
    token_endpoint: `${issuer}/oauth/tokens`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    grant_types_supported: Object.keys(GRANTS),
    response_types_supported: [],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
  }
}
