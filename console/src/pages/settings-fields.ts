import type { Settings } from '../types.js'
import { duration } from './delivery.js'

// Every setting the console shows and edits, in the page's groups, with how a person reads it and types it.

export type SettingName = keyof Settings

/**
 * How a setting is shown and typed: seconds and days as numbers, the retry schedule as comma-separated seconds, a
 * choice among `options`, scopes as space-separated text, a list (grant types) as space-separated words, a count, and
 * days that may be unset (never).
 */
type Kind = 'seconds' | 'days' | 'delays' | 'url' | 'audience' | 'alg' | 'flag' | 'choice' | 'scopes' | 'list' | 'count' | 'days-or-never'

export interface SettingField {
  name: SettingName
  label: string
  kind: Kind
  /** A choice's values, as the API names them. */
  options?: readonly string[]
}

export const SETTING_GROUPS: Array<{ title: string; fields: SettingField[] }> = [
  {
    title: 'Lifetimes',
    fields: [
      { name: 'access_token_ttl', label: 'Access tokens', kind: 'seconds' },
      { name: 'id_token_ttl', label: 'ID tokens', kind: 'seconds' },
      { name: 'authorization_code_ttl', label: 'Authorization codes', kind: 'seconds' },
      { name: 'refresh_token_idle_ttl', label: 'Refresh tokens, unused', kind: 'seconds' },
      { name: 'refresh_token_absolute_ttl', label: 'Refresh tokens, at most', kind: 'seconds' },
      { name: 'session_ttl', label: 'Browser sessions', kind: 'seconds' },
    ],
  },
  {
    title: 'Webhook retries and retention',
    fields: [
      { name: 'webhook_retry_schedule', label: 'Delays before each retry', kind: 'delays' },
      { name: 'webhook_retention_days', label: 'Finished deliveries and events kept', kind: 'days' },
      { name: 'webhook_disable_after', label: 'An endpoint failing without a success is disabled after', kind: 'seconds' },
    ],
  },
  {
    title: 'Sign-in',
    fields: [
      { name: 'login_url', label: 'Login page', kind: 'url' },
      { name: 'consent_url', label: 'Consent page', kind: 'url' },
      { name: 'logout_url', label: 'Logout page', kind: 'url' },
      { name: 'post_logout_url', label: 'After a logout with no page of the client to return to', kind: 'url' },
      { name: 'error_url', label: 'Error page', kind: 'url' },
      { name: 'default_audience', label: 'Default audience of access tokens', kind: 'audience' },
      { name: 'access_token_signing_alg', label: 'Access token signing algorithm', kind: 'alg' },
      { name: 'require_par', label: 'Require pushed authorization requests (PAR)', kind: 'flag' },
      { name: 'client_id_metadata_documents', label: 'Accept clients named by the URL of their metadata document', kind: 'flag' },
      { name: 'login_challenge_ttl', label: 'Login and consent challenges', kind: 'seconds' },
      { name: 'refresh_token_reuse_interval', label: 'A spent refresh token still answers a retried request for', kind: 'seconds' },
    ],
  },
  {
    title: 'Devices (RFC 8628)',
    fields: [
      { name: 'device_verification_url', label: 'Page where users type a device code', kind: 'url' },
      { name: 'device_done_url', label: 'Page a device sign-in ends at', kind: 'url' },
      { name: 'device_code_ttl', label: 'Device codes', kind: 'seconds' },
      { name: 'device_poll_interval', label: 'Devices wait between polls at first', kind: 'seconds' },
    ],
  },
  {
    title: 'Client registration (RFC 7591)',
    fields: [
      { name: 'registration', label: 'Clients may register themselves', kind: 'choice', options: ['disabled', 'initial_access_token', 'open'] },
      { name: 'registration_scope', label: 'Scopes a registered client may get at most', kind: 'scopes' },
      { name: 'registration_grant_types', label: 'Grant types a registered client may use at most', kind: 'list' },
      { name: 'registration_max_clients', label: 'Registered clients the account may hold', kind: 'count' },
      { name: 'registration_prune_after_days', label: 'Registered clients unused this long are deleted', kind: 'days-or-never' },
      { name: 'registration_rate_limit', label: 'Open registrations per address and hour', kind: 'count' },
    ],
  },
]

export const SETTING_FIELDS: SettingField[] = SETTING_GROUPS.flatMap((group) => group.fields)

/** A setting's value in words, as the read-only page shows it. */
export function inWords(field: SettingField, value: Settings[SettingName]): string {
  switch (field.kind) {
    case 'seconds':
      return duration(value as number)
    case 'days':
      return `${value as number} days`
    case 'delays':
      return (value as number[]).map(duration).join(', ')
    case 'url':
      return (value as string | null) ?? 'not set'
    case 'audience':
      return (value as string | null) ?? 'the issuer'
    case 'alg':
      return value as string
    case 'flag':
      return value ? 'yes' : 'no'
    case 'choice':
    case 'count':
      return String(value)
    case 'scopes':
      return (value as string) || 'none'
    case 'list':
      return (value as string[]).join(', ') || 'none'
    case 'days-or-never':
      return value === null ? 'never' : `${value as number} days`
  }
}

/** A setting as its input holds it: text, or a checkbox's state. */
export function toInput(field: SettingField, value: Settings[SettingName]): string | boolean {
  if (field.kind === 'flag') return value as boolean
  if (field.kind === 'delays') return (value as number[]).join(', ')
  if (field.kind === 'list') return (value as string[]).join(' ')
  return value === null ? '' : String(value)
}

/** The numbers of a comma-separated list; what is not a number stays NaN, for the API to refuse where it stands. */
export function parseDelays(text: string): number[] {
  return text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map(Number)
}

/**
 * An input's value as the API takes it. A number that isn't one is sent as null (JSON has no NaN), so the API's own
 * message says what is wrong, beside the input; an empty URL or audience is null, which unsets it.
 */
export function fromInput(field: SettingField, input: string | boolean): unknown {
  if (typeof input === 'boolean') return input
  switch (field.kind) {
    case 'seconds':
    case 'days':
    case 'count':
    case 'days-or-never':
      return input.trim() === '' ? null : Number(input)
    case 'scopes':
      return input.trim().split(/\s+/).filter(Boolean).join(' ')
    case 'list':
      return input.trim().split(/\s+/).filter(Boolean)
    case 'delays':
      return parseDelays(input)
    case 'url':
    case 'audience':
      return input.trim() || null
    default:
      return input
  }
}
