import { randomUUID } from 'node:crypto'
import type { BatchedOutbox } from '../../platform/events/batched-outbox.js'
import { OAuthError } from '../../platform/http/oauth-errors.js'
import { issueAccessToken } from './access-token.js'
import { accessTokenAudience } from './audience-policy.js'
import { ACCESS_TOKEN_TYPE, actorClaim, checkDepth, checkMayAct, exchangedFrom, exchangedScopes } from './delegation-policy.js'
import type { ExchangeTokens } from './exchange-tokens.js'
import type { GrantContext, TokenResponse } from './grants.js'
import type { TokenRequestBody } from './token-request.js'

/** The consent's own claims stay with the subject token: the new one carries the grant's id alone. */
const NO_CLAIMS: Readonly<Record<string, unknown>> = Object.freeze({})

/**
 * Token exchange (RFC 8693), as a pipeline: read the request, the subject token and the actor token, check that the
 * subject lets this actor act for it (`may_act`), then issue an access token for the subject: `act` names the client
 * (delegation) unless it is registered for impersonation; the scope, the audience and the lifetime never go beyond
 * the subject token's or the client's. The token carries the subject's grant (`gid`) and the tokens it was exchanged
 * from (`sjti`), so revoking either makes it inactive. `oauth.token.exchanged` is written in the background (see
 * BatchedOutbox): the answer doesn't wait for it.
 */
export class TokenExchangeGrant {
  constructor(
    private readonly tokens: ExchangeTokens,
    private readonly events: BatchedOutbox,
  ) {}

  readonly issue = async (context: GrantContext): Promise<TokenResponse> => {
    const { account, issuer, client, settings, nowMs } = context
    const request = exchangeRequest(context.body, context.resources)
    const asked = { accountId: account.id, issuer, client, nowMs }
    const [subject, actor] = await Promise.all([
      this.tokens.subject(asked, request.subjectToken, request.subjectTokenType),
      request.actorToken === undefined ? client.id : this.tokens.actor(asked, request.actorToken, request.actorTokenType),
    ])
    checkMayAct(subject.mayAct, actor, client)
    const act = actorClaim(client, actor, subject)
    const sjti = exchangedFrom(subject)
    checkDepth(act, sjti)
    const scopes = exchangedScopes(client, subject.scopes, context.body.scope)
    const audience = accessTokenAudience({ client, settings, issuer, scopes, resources: request.targets })
    const scope = scopes.join(' ')
    const jti = randomUUID()
    const { token, expiresIn } = issueAccessToken({
      issuer,
      subject: subject.subject,
      client,
      audience,
      scope,
      settings,
      signer: context.signer,
      nowMs,
      jti,
      ...(subject.grantId !== undefined && { grant: { id: subject.grantId, claims: NO_CLAIMS } }),
      exchange: { act, sjti },
      notAfter: subject.exp,
    })
    this.events.record(account.id, 'oauth.token.exchanged', {
      jti,
      client_id: client.id,
      subject: subject.subject,
      subject_token_type: subject.tokenType,
      subject_jti: subject.jti ?? null,
      grant_id: subject.grantId ?? null,
      act: act ?? null,
      scope: scopes,
      audience,
      expires_at: new Date((Math.floor(nowMs / 1000) + expiresIn) * 1000).toISOString(),
    })
    return { access_token: token, token_type: 'Bearer', expires_in: expiresIn, scope, issued_token_type: ACCESS_TOKEN_TYPE }
  }
}

interface ExchangeRequest {
  subjectToken: string
  subjectTokenType: string
  actorToken: string | undefined
  actorTokenType: string | undefined
  /** The `resource` and `audience` values together (RFC 8693 §2.1): Herald issues for one target at most. */
  targets: readonly string[]
}

/** RFC 8693 §2.1's parameters, present and consistent. */
function exchangeRequest(body: TokenRequestBody, resources: readonly string[]): ExchangeRequest {
  const { subject_token: subjectToken, subject_token_type: subjectTokenType, actor_token: actorToken, actor_token_type: actorTokenType } = body
  if (subjectToken === undefined || subjectToken === '') throw new OAuthError('invalid_request', 'subject_token is required')
  if (subjectTokenType === undefined || subjectTokenType === '') throw new OAuthError('invalid_request', 'subject_token_type is required')
  if (actorToken === '') throw new OAuthError('invalid_request', 'actor_token is empty')
  if (actorToken === undefined && actorTokenType !== undefined) throw new OAuthError('invalid_request', 'actor_token_type is given without actor_token')
  if (body.requested_token_type !== undefined && body.requested_token_type !== ACCESS_TOKEN_TYPE) {
    throw new OAuthError('invalid_request', `Herald issues access tokens only: requested_token_type must be ${ACCESS_TOKEN_TYPE}`)
  }
  const audiences = body.audience === undefined ? [] : Array.isArray(body.audience) ? body.audience : [body.audience]
  const targets = audiences.length === 0 ? resources : [...new Set([...resources, ...audiences])]
  return { subjectToken, subjectTokenType, actorToken, actorTokenType, targets }
}
