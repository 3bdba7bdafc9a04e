import { Type } from 'typebox'
import type { Kysely } from 'kysely'
import { notFound } from '../http/problems.js'
import { named, problemResponses, ref } from '../http/schemas.js'
import type { App } from '../http/types.js'
import type { DB } from '../storage/schema.js'
import { transaction } from '../storage/transaction.js'
import { LIFETIME_BOUNDS, type SettingsStore, WEBHOOK_BOUNDS } from './settings.js'
import { RegistrationSettingsFields } from '../../authorization/registration/registration-settings.js'

const lifetime = (name: keyof typeof LIFETIME_BOUNDS, description: string) =>
  Type.Integer({ ...LIFETIME_BOUNDS[name], description: `${description}, in seconds` })

const appUrl = (description: string) =>
  Type.Union([Type.String({ minLength: 1, maxLength: 2048 }), Type.Null()], { description: `${description}; https, or http on loopback; null when unset` })

const SettingsFields = {
  access_token_ttl: lifetime('access_token_ttl', 'Access token lifetime'),
  refresh_token_idle_ttl: lifetime('refresh_token_idle_ttl', 'How long an unused refresh token stays valid'),
  refresh_token_absolute_ttl: lifetime('refresh_token_absolute_ttl', 'How long a grant can be refreshed at all'),
  id_token_ttl: lifetime('id_token_ttl', 'ID token lifetime'),
  authorization_code_ttl: lifetime('authorization_code_ttl', 'Authorization code lifetime'),
  default_audience: Type.Union([Type.String({ minLength: 1, maxLength: 2048 }), Type.Null()], {
    description: '`aud` of access tokens when neither the request nor the client names one; null means the issuer',
  }),
  access_token_signing_alg: Type.Enum(['ES256', 'RS256']),
  webhook_retry_schedule: Type.Array(Type.Integer(WEBHOOK_BOUNDS.retry_delay), {
    ...WEBHOOK_BOUNDS.retries,
    description: 'Seconds to wait before each retry of a failed webhook delivery (each varied by ±20%); the first attempt is immediate',
  }),
  webhook_retention_days: Type.Integer({ ...WEBHOOK_BOUNDS.webhook_retention_days, description: 'Days finished deliveries, their attempts and events are kept' }),
  webhook_disable_after: Type.Integer({ ...WEBHOOK_BOUNDS.webhook_disable_after, description: 'Seconds an endpoint may keep failing, without one success, before it is disabled' }),
  login_url: appUrl("The account's login page: authorize sends the browser there with a `login_challenge`"),
  consent_url: appUrl("The account's consent page: the browser comes there with a `consent_challenge`"),
  logout_url: appUrl("The account's logout confirmation page"),
  error_url: appUrl('Where authorize shows errors it must not send to an unverified redirect_uri (with `error` and `error_description`)'),
  post_logout_url: appUrl("Where the browser goes after a logout that names no post_logout_redirect_uri of the client's; unset, Herald shows a page of its own"),
  login_challenge_ttl: lifetime('login_challenge_ttl', 'How long a login or consent challenge can be answered'),
  session_ttl: lifetime('session_ttl', 'How long a remembered browser session lasts unless the login says otherwise'),
  require_par: Type.Boolean({ description: 'Authorization requests must be pushed first (RFC 9126)' }),
  refresh_token_reuse_interval: lifetime('refresh_token_reuse_interval', 'How long a spent refresh token still answers with the same successor (a retried request) instead of revoking its grant'),
  device_verification_url: appUrl("The account's page where a user types a device's user code: `{issuer}/oauth/device` sends the browser there with a `device_challenge` (RFC 8628)"),
  device_done_url: appUrl('Where the browser ends a device sign-in (with `error` when it was refused); never a client redirect URI'),
  device_code_ttl: lifetime('device_code_ttl', 'How long a device code and its user code can be used (RFC 8628 §3.2 expires_in)'),
  device_poll_interval: lifetime('device_poll_interval', 'How long a device waits between polls of the token endpoint at first (RFC 8628 §3.2 interval)'),
  client_id_metadata_documents: Type.Boolean({
    description: 'A client_id that is an https URL names a Client ID Metadata Document, which Herald fetches through the SSRF guard, caches and uses as a public or private_key_jwt client',
  }),
  ...RegistrationSettingsFields,
}

const SettingsSchema = named('Settings', Type.Object(SettingsFields, { description: "The account's token lifetimes, signing algorithm and webhook delivery settings" }))
export const settingsSchemas = [SettingsSchema]
const SettingsPatch = Type.Partial(Type.Object(SettingsFields), { additionalProperties: false, minProperties: 1 })

export function settingsRoutes(app: App, deps: { db: Kysely<DB>; settings: SettingsStore }): void {
  app.get(
    '/settings',
    { config: { scope: 'herald:settings:write' }, schema: { summary: "The account's token and webhook settings", response: { 200: ref(SettingsSchema, "The account's settings"), ...problemResponses } } },
    async (request) => {
      const settings = await deps.settings.read(deps.db, request.account.id)
      if (!settings) throw notFound('The account settings')
      return settings
    },
  )

  app.patch(
    '/settings',
    {
      config: { scope: 'herald:settings:write' },
      bodyLimit: 16 * 1024,
      schema: { summary: "Changes the account's token and webhook settings; new tokens and delivery attempts follow them at once", body: SettingsPatch, response: { 200: ref(SettingsSchema, 'The settings as changed'), ...problemResponses } },
    },
    async (request) => transaction(deps.db, (tx) => deps.settings.update(tx, request.account.id, request.body)),
  )
}
