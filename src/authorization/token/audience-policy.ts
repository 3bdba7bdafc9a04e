import { OAuthError } from '../../platform/http/oauth-errors.js'
import type { AccountSettings } from '../../platform/settings/settings.js'
import { isReservedScope } from '../../platform/management-auth/scopes.js'
import type { RegisteredClient } from '../clients/client-store.js'

export interface AudienceInput {
  client: RegisteredClient
  settings: AccountSettings
  issuer: string
  scopes: readonly string[]
  /** The RFC 8707 `resource` values of the request. */
  resources: readonly string[]
}

/**
 * The `aud` of an access token. Management tokens are always for the issuer itself. Otherwise the client's
 * audience, else the account's default, else the issuer; a requested `resource` must name that audience.
 */
export function accessTokenAudience({ client, settings, issuer, scopes, resources }: AudienceInput): string {
  const audience = scopes.some(isReservedScope) ? issuer : (client.audience ?? settings.defaultAudience ?? issuer)
  if (resources.length > 1) throw new OAuthError('invalid_target', 'Only one resource may be requested per token')
  const [resource] = resources
  if (resource !== undefined && resource !== audience) {
    throw new OAuthError('invalid_target', 'The client may not request a token for this resource')
  }
  return audience
}
