/**
 * The reserved management scopes. They are granted only through `client_credentials` to management clients,
 * and such tokens always have the account's issuer as their audience.
 */
export const MANAGEMENT_SCOPES = [
  'herald:clients:read',
  'herald:clients:write',
  'herald:scopes:write',
  'herald:settings:write',
  'herald:keys:write',
  'herald:login',
  'herald:sessions:write',
  'herald:webhooks:read',
  'herald:webhooks:write',
  'herald:events:publish',
] as const

export type ManagementScope = (typeof MANAGEMENT_SCOPES)[number]

export const RESERVED_SCOPE_PREFIX = 'herald:'

export function isReservedScope(scope: string): boolean {
  return scope.startsWith(RESERVED_SCOPE_PREFIX)
}
