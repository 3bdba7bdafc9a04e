/**
 * The error codes OAuth endpoints answer with (RFC 6749 §4.1.2.1 and §5.2, RFC 8707 §2, RFC 7009 §2.2.1, RFC 9126
 * §2.3, OpenID Connect Core §3.1.2.6, RFC 6750 §3.1, RFC 8628 §3.5, RFC 7591 §3.2.2), each with its status. `invalid_client` is 401 because the
 * client authenticated, or tried to, and failed (RFC 6749 §5.2). Authorization errors travel in a redirect, where
 * the status is not seen.
 */
export const OAUTH_ERRORS = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  invalid_target: 400,
  unsupported_token_type: 400,
  server_error: 500,
  temporarily_unavailable: 503,
  access_denied: 400,
  unsupported_response_type: 400,
  invalid_request_uri: 400,
  login_required: 400,
  consent_required: 400,
  interaction_required: 400,
  request_not_supported: 400,
  registration_not_supported: 400,
  invalid_token: 401,
  insufficient_scope: 403,
  authorization_pending: 400,
  slow_down: 400,
  expired_token: 400,
  invalid_client_metadata: 400,
  invalid_redirect_uri: 400,
  too_many_requests: 429,
} as const satisfies Record<string, number>

export type OAuthErrorCode = keyof typeof OAUTH_ERRORS

export class OAuthError extends Error {
  readonly status: number

  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    /** `WWW-Authenticate` challenge, for `invalid_client` after an authentication attempt. */
    readonly challenge?: string,
  ) {
    super(description)
    this.name = 'OAuthError'
    this.status = OAUTH_ERRORS[code]
  }

  toBody(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.code, error_description: this.description }
  }
}
