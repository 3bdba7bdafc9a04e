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
 * The `aud` of an access token. Management tokens are always for the issuer itself. Otherwise a requested
 * `resource` (RFC 8707) if the client's audience list allows it; without one, the first of the client's
 * audiences, else the account's default, else the issuer.
 */
export function accessTokenAudience({ client, settings, issuer, scopes, resources }: AudienceInput): string {
  const fallback = scopes.some(isReservedScope) ? issuer : (client.metadata.audience[0] ?? settings.default_audience ?? issuer)
  if (resources.length > 1) throw new OAuthError('invalid_target', 'Only one resource may be requested per token')
  const [resource] = resources
  if (resource === undefined || resource === fallback) return fallback
  if (!scopes.some(isReservedScope) && client.metadata.audience.includes(resource)) return resource
  throw new OAuthError('invalid_target', 'The client may not request a token for this resource')
}
