import { decodeJwt } from 'jose'
import { type Awaitable, andThen } from '../../platform/cache/awaitable.js'
import { OAuthError } from '../../platform/http/oauth-errors.js'
import type { RegisteredClient } from '../clients/client-store.js'
import { ClientDocumentError } from '../client-documents/client-document-error.js'
import type { ClientFinder } from '../client-documents/client-lookup.js'
import { clientSecretMatches } from '../clients/secrets.js'
import { CLIENT_ASSERTION_TYPE, type ClientAssertions } from './client-assertion.js'

export type PresentedCredentials =
  | { method: 'client_secret_basic' | 'client_secret_post'; clientId: string; secret: string }
  | { method: 'private_key_jwt'; clientId: string; assertion: string }
  /** A public client (RFC 6749 §2.1) names itself and proves nothing. */
  | { method: 'none'; clientId: string }

/** The client authentication parameters of a form body; the endpoint's body may carry others too. */
export interface CredentialParameters {
  client_id?: string
  client_secret?: string
  client_assertion?: unknown
  client_assertion_type?: unknown
}

/**
 * Reads the client's credentials from the request: HTTP Basic (RFC 6749 §2.3.1, where both parts are
 * form-urlencoded before base64), `client_id`/`client_secret` in the body, or a client assertion (RFC 7521 §4.2).
 * Using two methods at once is refused, as RFC 6749 §2.3 requires.
 */
function readClientCredentials(authorization: string | undefined, body: CredentialParameters): PresentedCredentials {
  if (body.client_assertion !== undefined || body.client_assertion_type !== undefined) {
    if (authorization !== undefined || body.client_secret !== undefined) {
      throw new OAuthError('invalid_request', 'Use one client authentication method, not a client assertion together with a secret')
    }
    return readClientAssertion(body)
  }
  if (authorization !== undefined) {
    if (body.client_secret !== undefined) {
      throw new OAuthError('invalid_request', 'Use one client authentication method, not Basic and client_secret together')
    }
    const basic = parseBasic(authorization)
    if (body.client_id !== undefined && body.client_id !== basic.clientId) {
      throw new OAuthError('invalid_request', 'client_id in the body does not match the Authorization header')
    }
    return { method: 'client_secret_basic', clientId: basic.clientId, secret: basic.secret }
  }
  if (body.client_id !== undefined && body.client_secret !== undefined) {
    return { method: 'client_secret_post', clientId: body.client_id, secret: body.client_secret }
  }
  if (body.client_id !== undefined && body.client_id !== '') return { method: 'none', clientId: body.client_id }
  throw invalidClient('Client authentication is required', false)
}

/**
 * RFC 7521 §4.2 and RFC 7523 §3: `client_id` may be left out, since the assertion's `sub` names the client. The
 * claims read here are not trusted yet: they only pick the client whose keys must then verify the assertion.
 */
function readClientAssertion(body: CredentialParameters): PresentedCredentials {
  const { client_assertion: assertion, client_assertion_type: type } = body
  if (typeof assertion !== 'string' || assertion === '' || typeof type !== 'string' || type === '') {
    throw new OAuthError('invalid_request', 'client_assertion and client_assertion_type must be given together')
  }
  if (type !== CLIENT_ASSERTION_TYPE) throw invalidClient(`client_assertion_type must be ${CLIENT_ASSERTION_TYPE}`, false)
  let subject: unknown
  try {
    subject = decodeJwt(assertion).sub
  } catch {
    throw invalidClient('The client assertion is not a JWT', false)
  }
  if (typeof subject !== 'string' || subject === '') throw invalidClient('The client assertion has no sub claim', false)
  if (body.client_id !== undefined && body.client_id !== subject) {
    throw invalidClient("client_id does not match the client assertion's sub", false)
  }
  return { method: 'private_key_jwt', clientId: subject, assertion }
}

/**
 * Authenticates the client making an OAuth request (token, introspection, revocation) by the method it
 * registered: a secret, or a signed assertion. Every failure is `invalid_client`.
 */
export class ClientAuthentication {
  constructor(
    private readonly clients: ClientFinder,
    private readonly assertions: ClientAssertions,
  ) {}

  /**
   * Synchronous for a secret-authenticated client in the warm cache (see andThen); throws or rejects `invalid_client`.
   * A public client is accepted only where `allowPublic` says the endpoint serves it (token, PAR, revocation).
   */
  authenticate(accountId: string, issuer: string, authorization: string | undefined, body: CredentialParameters, allowPublic = false): Awaitable<RegisteredClient> {
    const presented = readClientCredentials(authorization, body)
    const client = documentErrorsAsInvalidClient(this.clients.find(accountId, presented.clientId))
    if (presented.method === 'none') return andThen(client, (found) => checkPublic(found, allowPublic))
    if (presented.method !== 'private_key_jwt') return andThen(client, (found) => checkSecret(found, presented))
    return andThen(client, (found) => this.#checkAssertion(found, presented.assertion, issuer))
  }

  async #checkAssertion(client: RegisteredClient | undefined, assertion: string, issuer: string): Promise<RegisteredClient> {
    if (!client || client.tokenEndpointAuthMethod !== 'private_key_jwt') throw invalidClient('Client authentication failed', false)
    await this.assertions.authenticate(client, assertion, issuer)
    return client
  }
}

/** A client_id whose metadata document can't be used names no client, and the response says why. */
function documentErrorsAsInvalidClient(client: Awaitable<RegisteredClient | undefined>): Awaitable<RegisteredClient | undefined> {
  if (!(client instanceof Promise)) return client
  return client.catch((error: unknown) => {
    throw error instanceof ClientDocumentError ? invalidClient(error.message, false) : error
  })
}

/** A public client is who it says it is; a confidential one that sent no credentials failed to authenticate. */
function checkPublic(client: RegisteredClient | undefined, allowPublic: boolean): RegisteredClient {
  if (!client || client.tokenEndpointAuthMethod !== 'none') throw invalidClient('Client authentication is required', false)
  // The same answer as for a confidential client without credentials: which clients are public is nobody's business.
  if (!allowPublic) throw invalidClient('Client authentication is required', false)
  return client
}

/** Checks the client's secret and registered method; every failure looks the same to the caller. */
function checkSecret(client: RegisteredClient | undefined, presented: Extract<PresentedCredentials, { secret: string }>): RegisteredClient {
  const basic = presented.method === 'client_secret_basic'
  if (!client || client.secretHash === null || !clientSecretMatches(presented.secret, client.secretHash)) {
    throw invalidClient('Client authentication failed', basic)
  }
  if (client.tokenEndpointAuthMethod !== presented.method) {
    throw invalidClient(`This client authenticates with ${client.tokenEndpointAuthMethod}`, basic)
  }
  return client
}

function parseBasic(header: string): { clientId: string; secret: string } {
  const match = /^Basic ([A-Za-z0-9+/]+=*)$/i.exec(header)
  const decoded = match?.[1] ? Buffer.from(match[1], 'base64').toString('utf8') : ''
  const separator = decoded.indexOf(':')
  if (separator <= 0) throw invalidClient('The Authorization header is not valid Basic credentials', true)
  try {
    return { clientId: formDecode(decoded.slice(0, separator)), secret: formDecode(decoded.slice(separator + 1)) }
  } catch {
    throw invalidClient('The Basic credentials are not form-urlencoded', true)
  }
}

function formDecode(value: string): string {
  // Herald's own client ids and secrets have nothing to decode; skipping the work shows on the token endpoint.
  return /[%+]/.test(value) ? decodeURIComponent(value.replace(/\+/g, ' ')) : value
}

/** RFC 6749 §5.2: a client that tried the Authorization header gets a 401 with a Basic challenge. */
function invalidClient(description: string, triedBasic: boolean): OAuthError {
  return new OAuthError('invalid_client', description, triedBasic ? 'Basic realm="herald", charset="UTF-8"' : undefined)
}
