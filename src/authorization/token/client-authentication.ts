import { OAuthError } from '../../platform/http/oauth-errors.js'
import type { TokenEndpointAuthMethod } from '../../platform/storage/schema.js'
import type { ClientStore, RegisteredClient } from '../clients/client-store.js'
import { clientSecretMatches } from '../clients/secrets.js'

export interface PresentedCredentials {
  method: TokenEndpointAuthMethod
  clientId: string
  secret: string
}

/**
 * Reads the client's credentials from the request: HTTP Basic (RFC 6749 §2.3.1, where both parts are
 * form-urlencoded before base64) or `client_id`/`client_secret` in the body. Using both at once is refused,
 * as §2.3 requires.
 */
export function readClientCredentials(authorization: string | undefined, body: { client_id?: string; client_secret?: string }): PresentedCredentials {
  if (authorization !== undefined) {
    if (body.client_secret !== undefined) {
      throw new OAuthError('invalid_request', 'Use one client authentication method, not Basic and client_secret together')
    }
    const basic = parseBasic(authorization)
    if (body.client_id !== undefined && body.client_id !== basic.clientId) {
      throw new OAuthError('invalid_request', 'client_id in the body does not match the Authorization header')
    }
    return { method: 'client_secret_basic', ...basic }
  }
  if (body.client_id !== undefined && body.client_secret !== undefined) {
    return { method: 'client_secret_post', clientId: body.client_id, secret: body.client_secret }
  }
  throw invalidClient('Client authentication is required', false)
}

/** Finds the client and checks its secret and registered method; every failure looks the same to the caller. */
export async function authenticateClient(clients: ClientStore, accountId: string, presented: PresentedCredentials): Promise<RegisteredClient> {
  const basic = presented.method === 'client_secret_basic'
  const client = await clients.find(accountId, presented.clientId)
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
  return decodeURIComponent(value.replace(/\+/g, ' '))
}

/** RFC 6749 §5.2: a client that tried the Authorization header gets a 401 with a Basic challenge. */
function invalidClient(description: string, triedBasic: boolean): OAuthError {
  return new OAuthError('invalid_client', description, triedBasic ? 'Basic realm="herald", charset="UTF-8"' : undefined)
}
