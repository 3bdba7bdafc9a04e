import { SCOPE_CLAIMS } from '../grants/scope-claims.js'
import { ASSERTION_SIGNING_ALGS } from '../token/client-assertion.js'
import { GRANT_TYPES_SUPPORTED } from '../token/grants.js'
import { PROMPTS, RESPONSE_MODES } from '../sign-in/authorization-request.js'

/**
 * OpenID Connect Discovery §3 `claims_supported`: the claims Herald sets in an ID token, and the standard claims a
 * consent may give (each with its scope, see scope-claims.ts); a consent's claims of its own are not known ahead.
 */
const CLAIMS_SUPPORTED = ['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'acr', 'amr', 'azp', 'at_hash', 'sid', ...Object.values(SCOPE_CLAIMS).flat()]

/**
 * The authorization server metadata (RFC 8414 §2; OpenID Connect Discovery §3). It lists only what Herald
 * implements.
 */
/** What an account's settings turn on that its metadata tells. */
export interface AccountFeatures {
  requirePar: boolean
  clientIdMetadataDocuments: boolean
  /** RFC 7591 registration in either mode. */
  registration: boolean
}

export function serverMetadata(issuer: string, { requirePar, clientIdMetadataDocuments, registration }: AccountFeatures): Record<string, unknown> {
  // One client authentication for every endpoint: see ClientAuthentication. Public clients (none) may use the token
  // endpoint and PAR with PKCE, and revoke their tokens.
  const authMethods = ['client_secret_basic', 'client_secret_post', 'private_key_jwt']
  const publicToo = [...authMethods, 'none']
  const signingAlgs = [...ASSERTION_SIGNING_ALGS]
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    pushed_authorization_request_endpoint: `${issuer}/oauth/par`,
    device_authorization_endpoint: `${issuer}/oauth/device_authorization`,
    token_endpoint: `${issuer}/oauth/tokens`,
    // RFC 8414 §2: listed only while the account lets clients register (RFC 7591).
    ...(registration && { registration_endpoint: `${issuer}/oauth/register` }),
    userinfo_endpoint: `${issuer}/oauth/userinfo`,
    end_session_endpoint: `${issuer}/oauth/logout`,
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    // draft-ietf-oauth-client-id-metadata-document §5: as the account's setting says.
    client_id_metadata_document_supported: clientIdMetadataDocuments,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    introspection_endpoint: `${issuer}/oauth/introspect`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    grant_types_supported: [...GRANT_TYPES_SUPPORTED],
    response_types_supported: ['code'],
    response_modes_supported: [...RESPONSE_MODES],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256', 'ES256'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    require_pushed_authorization_requests: requirePar,
    prompt_values_supported: [...PROMPTS],
    claims_supported: CLAIMS_SUPPORTED,
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    token_endpoint_auth_methods_supported: publicToo,
    token_endpoint_auth_signing_alg_values_supported: signingAlgs,
    introspection_endpoint_auth_methods_supported: authMethods,
    introspection_endpoint_auth_signing_alg_values_supported: signingAlgs,
    revocation_endpoint_auth_methods_supported: publicToo,
    revocation_endpoint_auth_signing_alg_values_supported: signingAlgs,
    scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
  }
}
