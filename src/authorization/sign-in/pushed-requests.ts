import type { Kysely } from 'kysely'
import { randomToken } from '../../platform/crypto/random.js'
import { newId } from '../../platform/ids.js'
import type { DB } from '../../platform/storage/schema.js'
import type { AuthorizationRequest } from './authorization-request.js'
import { UntrustedRequestError } from './authorization-request.js'
import type { BrowserContext } from './authorize-flow.js'
import { type Flow, type FlowStore, secretDigest } from './flow-store.js'

/** RFC 9126 §2.2: the request_uri is an opaque URN; Herald's live at most this long (§2.2 suggests 5 to 600 s). */
export const PAR_TTL_SECONDS = 60
const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:'

/** Stores a validated request pushed by its client (RFC 9126 §2); answers the request_uri that names it. */
export async function pushRequest(db: Kysely<DB>, flows: FlowStore, accountId: string, request: AuthorizationRequest, now: number): Promise<string> {
  const requestUri = `${REQUEST_URI_PREFIX}${randomToken()}`
  await flows.insert(db, accountId, {
    id: newId('flow', now),
    client_id: request.client_id,
    stage: 'pushed',
    request: JSON.stringify(request),
    browser: null,
    challenge: null,
    handle: secretDigest(requestUri),
    subject: null,
    session_id: null,
    login: null,
    consent: null,
    rejection: null,
    access_token_jti: null,
    access_token_expires_at: null,
    expires_at: now + PAR_TTL_SECONDS * 1000,
    created_at: now,
    updated_at: now,
  })
  return requestUri
}

/**
 * The pushed request a request_uri names, for the client that pushed it, unexpired and unused (RFC 9126 §4): the
 * flow moves on from `pushed` when it starts, so a request_uri serves once.
 */
export async function pushedFlow(flows: FlowStore, context: BrowserContext, clientId: string, requestUri: string): Promise<Flow> {
  const flow = requestUri.startsWith(REQUEST_URI_PREFIX) ? await flows.byHandle(context.account.id, requestUri) : undefined
  if (!flow || flow.stage !== 'pushed' || flow.clientId !== clientId || flow.expiresAt <= context.now) {
    throw new UntrustedRequestError('invalid_request_uri', 'request_uri is unknown, expired, used, or was pushed by another client')
  }
  return flow
}
