import type { Kysely } from 'kysely'
import { Type } from 'typebox'
import type { Clock } from '../../platform/clock.js'
import { randomToken } from '../../platform/crypto/random.js'
import { OAuthError } from '../../platform/http/oauth-errors.js'
import type { App } from '../../platform/http/types.js'
import { newId } from '../../platform/ids.js'
import type { SettingsStore } from '../../platform/settings/settings.js'
import type { DB } from '../../platform/storage/schema.js'
import { secretDigest } from '../sign-in/flow-store.js'
import { withQuery } from '../sign-in/navigation.js'
import { clientAuthenticatedRoute, noStore } from '../token/client-authenticated-route.js'
import type { ClientAuthentication } from '../token/client-authentication.js'
import { grantedScopes } from '../token/scope-policy.js'
import { ClientCredentialFields } from '../token/token-request.js'
import { DEVICE_CODE_GRANT_TYPE } from './device-code-grant.js'
import type { DeviceStore } from './device-store.js'
import { newUserCode, userCodeDigest } from './user-codes.js'

export interface DeviceAuthorizationRouteDeps {
  db: Kysely<DB>
  clientAuthentication: ClientAuthentication
  settings: SettingsStore
  devices: DeviceStore
  clock: Clock
}

const DeviceAuthorizationBody = Type.Object(
  { ...ClientCredentialFields, scope: Type.Optional(Type.String({ maxLength: 2048, description: 'Space-separated scopes; omitted means all the client may request' })) },
  { additionalProperties: true },
)

const DeviceAuthorizationResponse = Type.Object(
  {
    device_code: Type.String({ description: 'What the device polls the token endpoint with' }),
    user_code: Type.String({ description: 'What the user types, shown `BCDF-GHJK`; case and dashes do not matter' }),
    verification_uri: Type.String(),
    verification_uri_complete: Type.String({ description: 'verification_uri with the user code, for a QR code' }),
    expires_in: Type.Integer({ description: 'Seconds the codes can be used' }),
    interval: Type.Integer({ description: 'Seconds to wait between polls' }),
  },
  { description: 'RFC 8628 §3.2' },
)

/**
 * The device authorization endpoint (RFC 8628 §3.1-3.2), as a pipeline: authenticate the client (or take a public
 * client's id), check it registered the device grant, check the scopes, then record the request and answer its codes.
 * The device code has 256 random bits; it and the user code are stored only as digests.
 */
export function deviceAuthorizationRoutes(app: App, deps: DeviceAuthorizationRouteDeps): void {
  app.post(
    '/oauth/device_authorization',
    clientAuthenticatedRoute('Device authorization (RFC 8628): codes for a device without a browser', DeviceAuthorizationBody, { 200: DeviceAuthorizationResponse }),
    async (request, reply) => {
      const { account, issuer, body } = request
      noStore(reply)
      const client = await deps.clientAuthentication.authenticate(account.id, issuer, request.headers.authorization, body, true)
      if (!client.grantTypes.has(DEVICE_CODE_GRANT_TYPE)) throw new OAuthError('unauthorized_client', 'This client may not use the device authorization grant')
      const scopes = grantedScopes(client, body.scope)
      const settings = await deps.settings.get(account.id)
      if (!settings) throw new OAuthError('server_error', 'The account has no settings')
      const now = deps.clock.now()
      const deviceCode = randomToken()
      const userCode = newUserCode()
      await deps.devices.insert(
        deps.db,
        account.id,
        {
          id: newId('dev', now),
          client_id: client.id,
          device_code_hash: secretDigest(deviceCode),
          user_code_hash: userCodeDigest(userCode)!,
          scope: scopes.join(' '),
          interval: settings.device_poll_interval,
          expires_at: now + settings.device_code_ttl * 1000,
        },
        now,
      )
      const verificationUri = `${issuer}/oauth/device`
      return {
        device_code: deviceCode,
        user_code: userCode,
        verification_uri: verificationUri,
        verification_uri_complete: withQuery(verificationUri, { user_code: userCode }),
        expires_in: settings.device_code_ttl,
        interval: settings.device_poll_interval,
      }
    },
  )
}
