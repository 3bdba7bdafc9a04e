import type { AccountSettings } from '../../platform/settings/settings.js'
import type { RegisteredClient } from '../clients/client-store.js'
import { narrowedLifetime } from './access-token.js'

/**
 * Whether a grant gets a refresh token: the client registered the refresh_token grant and, for an OpenID Connect
 * request, the user granted `offline_access` (OpenID Connect Core §11).
 */
export function refreshTokenAllowed(client: RegisteredClient, scopes: readonly string[]): boolean {
  return client.grantTypes.has('refresh_token') && (scopes.includes('offline_access') || !scopes.includes('openid'))
}

/**
 * A grant's refresh lifetimes, decided at its first refresh token and kept by every rotation: the account's, each
 * narrowed by the client's when it sets a shorter one.
 */
export function refreshLifetimes(settings: AccountSettings, client: RegisteredClient, now: number): { idleTtl: number; absoluteExpiresAt: number } {
  const absolute = narrowedLifetime(settings.refresh_token_absolute_ttl, client.metadata.refresh_token_absolute_ttl)
  return { idleTtl: narrowedLifetime(settings.refresh_token_idle_ttl, client.metadata.refresh_token_idle_ttl), absoluteExpiresAt: now + absolute * 1000 }
}
