import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { constantTimeEqual, sha256 } from '../../platform/crypto/random.js'
import { OAuthError } from '../../platform/http/oauth-errors.js'
import type { KeyStore } from '../../platform/keys/key-store.js'
import type { DB } from '../../platform/storage/schema.js'
import type { TokenRevocations } from '../revocation/revocation-store.js'
import type { Flow, FlowStore } from '../sign-in/flow-store.js'
import { issueAccessToken } from './access-token.js'
import { accessTokenAudience } from './audience-policy.js'
import type { GrantContext, TokenResponse } from './grants.js'
import { issueIdToken } from './id-token.js'

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/

/**
 * RFC 6749 §4.1.3: redeems a code for the user's tokens. The code is single-use: a second redemption fails and
 * revokes the access token the first one issued (RFC 6749 §4.1.2, RFC 9700 §4.5.3.1). The code belongs to the
 * client it was issued to, needs the authorization's redirect_uri and, when the request had a challenge, the
 * PKCE verifier (RFC 7636 §4.6); a verifier without a challenge is refused too (RFC 9700 §2.1.1, PKCE downgrade).
 */
export class AuthorizationCodeGrant {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly flows: FlowStore,
    private readonly keys: KeyStore,
    private readonly revocations: TokenRevocations,
  ) {}

  readonly issue = async (context: GrantContext): Promise<TokenResponse> => {
    const { account, client, body, nowMs } = context
    if (typeof body.code !== 'string' || body.code === '') throw new OAuthError('invalid_request', 'code is required')
    const flow = await this.flows.byHandle(account.id, body.code)
    if (!flow || (flow.stage !== 'code' && flow.stage !== 'redeemed') || flow.clientId !== client.id) {
      throw new OAuthError('invalid_grant', 'The code is unknown, expired, or was issued to another client')
    }
    if (flow.stage === 'redeemed') {
      await this.#revokeIssued(flow, nowMs)
      throw new OAuthError('invalid_grant', 'The code was used already; the tokens issued with it are revoked')
    }
    if (flow.expiresAt <= nowMs) throw new OAuthError('invalid_grant', 'The code has expired')
    if (body.redirect_uri !== flow.request.redirect_uri) throw new OAuthError('invalid_grant', 'redirect_uri is not the one the code was issued for')
    checkVerifier(flow.request.code_challenge, body.code_verifier)
    const consent = flow.consent
    const login = flow.login
    if (!consent || !login || flow.subject === null) throw new OAuthError('invalid_grant', 'The code is unknown, expired, or was issued to another client')

    const { issuer, settings } = context
    const scopes = consent.grant_scope
    const scope = scopes.join(' ')
    const audience = accessTokenAudience({ client, settings, issuer, scopes, resources: consent.grant_audience.slice(0, 1) })
    const jti = randomUUID()
    const grant = { id: flow.id, claims: consent.session.access_token }
    const { token, expiresIn } = issueAccessToken({ issuer, subject: flow.subject, client, audience, scope, settings, signer: context.signer, nowMs, jti, grant })
    const expiresAt = nowMs + expiresIn * 1000
    // The flow now lives as long as its access token: userinfo reads the consent's claims from it, and a replayed
    // code must still find the token to revoke.
    const redeemed = await this.flows.advance(this.db, flow, { stage: 'redeemed', access_token_jti: jti, access_token_expires_at: expiresAt, expires_at: expiresAt }, nowMs)
    if (!redeemed) {
      // Another request redeemed it between the read and now: this one is the replay.
      const current = await this.flows.byId(account.id, flow.id)
      if (current) await this.#revokeIssued(current, nowMs)
      throw new OAuthError('invalid_grant', 'The code was used already; the tokens issued with it are revoked')
    }
    const response: TokenResponse = { access_token: token, token_type: 'Bearer', expires_in: expiresIn, scope }
    if (!scopes.includes('openid')) return response
    const signer = await (await this.keys.keysOf(account.id))?.signer(client.metadata.id_token_signed_response_alg, nowMs)
    if (!signer) throw new OAuthError('server_error', 'The account has no key for the ID token algorithm')
    response.id_token = issueIdToken({
      issuer,
      client,
      subject: flow.subject,
      authTime: login.auth_time,
      acr: login.acr,
      amr: login.amr,
      sessionId: flow.sessionId,
      nonce: flow.request.nonce,
      accessToken: token,
      claims: consent.session.id_token,
      settings,
      signer,
      nowMs,
    })
    return response
  }

  async #revokeIssued(flow: Flow, now: number): Promise<void> {
    if (flow.accessTokenJti === null || flow.accessTokenExpiresAt === null) return
    await this.revocations.revoke(flow.accountId, { jti: flow.accessTokenJti, clientId: flow.clientId, expiresAt: flow.accessTokenExpiresAt }, now)
  }
}

function checkVerifier(challenge: string | null, verifier: unknown): void {
  if (challenge === null) {
    if (verifier !== undefined) throw new OAuthError('invalid_grant', 'code_verifier was sent, but the authorization request had no code_challenge')
    return
  }
  if (typeof verifier !== 'string' || !CODE_VERIFIER.test(verifier)) throw new OAuthError('invalid_grant', 'code_verifier is missing or malformed')
  if (!constantTimeEqual(sha256(verifier).toString('base64url'), challenge)) throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge')
}
