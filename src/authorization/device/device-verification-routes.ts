import { Type } from 'typebox'
import type { Clock } from '../../platform/clock.js'
import { named, problemResponses, ref } from '../../platform/http/schemas.js'
import type { App } from '../../platform/http/types.js'
import type { SettingsStore } from '../../platform/settings/settings.js'
import { untrustedSingle } from '../sign-in/authorization-request.js'
import { answerInBrowser } from '../sign-in/browser-endpoint.js'
import type { DeviceVerification } from './device-verification.js'

const DeviceQuery = Type.Object(
  { user_code: Type.Optional(Type.String({ description: 'The user code, from verification_uri_complete (RFC 8628 §3.3.1)' })) },
  { additionalProperties: true },
)

const BROWSER_RESPONSES = {
  302: { description: "To the account's device_verification_url with a `device_challenge` (and the `user_code`, if given)" },
  400: { description: 'The account has no device_verification_url or device_done_url (unless it has an error_url)', content: { 'text/plain': { schema: { type: 'string' } } } },
}

const Challenge = Type.Object({ challenge: Type.String({ minLength: 1, maxLength: 128 }) })
const UserCode = Type.String({ minLength: 1, maxLength: 64, description: 'What the user typed; case, dashes and spaces do not matter' })

const DeviceRequestSchema = named(
  'DeviceRequest',
  Type.Object(
    {
      challenge: Type.String(),
      attempts_left: Type.Integer({ description: 'Wrong user codes this request still takes before it is spent (RFC 8628 §5.1)' }),
      expires_at: Type.String({ format: 'date-time' }),
    },
    { description: 'A device verification waiting for the user code the user types' },
  ),
)
const DeviceAnswerSchema = named('DeviceRequestAnswer', Type.Object({ redirect_to: Type.String({ description: 'Where the app sends the browser next' }) }))
export const deviceSchemas = [DeviceRequestSchema, DeviceAnswerSchema]

const Acceptance = Type.Object({ user_code: UserCode }, { additionalProperties: false })
const Rejection = Type.Object({ user_code: Type.Optional(UserCode) }, { additionalProperties: false, description: 'With the user code the user was shown, that device is refused too' })

const ANSWER_LIMIT = 4 * 1024

/** `{issuer}/oauth/device`, the verification_uri (RFC 8628 §3.3): the browser is bound to a new verification there. */
export function deviceBrowserRoutes(app: App, deps: { settings: SettingsStore; clock: Clock; verification: DeviceVerification }): void {
  app.get(
    '/oauth/device',
    { config: { errorFormat: 'browser' as const }, schema: { summary: 'Device verification (RFC 8628 §3.3): on to the account\'s page for the user code', querystring: DeviceQuery, response: BROWSER_RESPONSES } },
    (request, reply) => answerInBrowser(deps, request, reply, (context) => deps.verification.start(context, untrustedSingle(request.query, 'user_code'))),
  )
}

/**
 * The account's app's side of the device verification (`herald:login`): read the request by its challenge, then
 * accept it with the user code the user typed, or reject it. Each answer says where the browser goes next.
 */
export function deviceRequestRoutes(app: App, verification: DeviceVerification): void {
  const base = '/oauth/device-requests/:challenge'
  const config = { scope: 'herald:login' as const }
  const answered = { 200: ref(DeviceAnswerSchema, 'Where the app sends the browser next'), ...problemResponses }
  app.get(
    base,
    { config, schema: { summary: 'A device verification waiting for its user code', params: Challenge, response: { 200: ref(DeviceRequestSchema, 'The device request'), ...problemResponses } } },
    async (request) => verification.view(request.account.id, request.params.challenge),
  )
  app.post(
    `${base}/accept`,
    { config, bodyLimit: ANSWER_LIMIT, schema: { summary: 'Accepts the device request with the user code; the browser goes on to login and consent', params: Challenge, body: Acceptance, response: answered } },
    async (request) => ({ redirect_to: await verification.accept(request.account.id, request.params.challenge, request.body.user_code) }),
  )
  app.post(
    `${base}/reject`,
    { config, bodyLimit: ANSWER_LIMIT, schema: { summary: "Rejects the device request; the browser goes to the account's device_done_url", params: Challenge, body: Rejection, response: answered } },
    async (request) => ({ redirect_to: await verification.reject(request.account.id, request.params.challenge, request.body.user_code) }),
  )
}
