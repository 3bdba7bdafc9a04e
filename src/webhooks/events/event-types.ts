/** Event type names: dot-separated segments of letters, digits, `_` and `-`, such as `invoice.paid`. */
const TYPE_NAME = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/
export const MAX_TYPE_LENGTH = 128

export function isValidTypeName(type: string): boolean {
  return type.length <= MAX_TYPE_LENGTH && TYPE_NAME.test(type)
}

/**
 * Herald's own namespaces: callers can't publish a type in one (`oauth.x`) nor the bare name (`oauth`), in any case
 * (`OAUTH.x` would pass for one).
 */
const RESERVED_NAMESPACES = ['oauth', 'webhook'] as const

export function isReservedType(type: string): boolean {
  const lower = type.toLowerCase()
  return RESERVED_NAMESPACES.some((namespace) => lower === namespace || lower.startsWith(`${namespace}.`))
}

/**
 * Events about webhook delivery itself. A delivery of one of these never causes another (a failed delivery of
 * `webhook.delivery.failed` emits nothing), so two dead endpoints can't feed each other.
 */
export function isOperationalType(type: string): boolean {
  return type.startsWith('webhook.')
}

/**
 * A subscription pattern: an exact type, `prefix.*` (every type under that prefix, at any depth), or `*`.
 */
export function isValidPattern(pattern: string): boolean {
  if (pattern === '*') return true
  return isValidTypeName(pattern.endsWith('.*') ? pattern.slice(0, -2) : pattern)
}

export function matchesPattern(pattern: string, type: string): boolean {
  if (pattern === '*') return true
  if (pattern.endsWith('.*')) return type.startsWith(pattern.slice(0, -1))
  return pattern === type
}

export interface EventTypeDescription {
  name: string
  description: string
  /** What `data` looks like in a delivery of this type. */
  example: object
}

const at = '2026-01-01T12:00:00.000Z'
const client = {
  client_id: 'cli_01JGZ7Q3M8V2X9K4T6N1P5R0SA',
  client_name: 'Billing service',
  grant_types: ['client_credentials'],
  token_endpoint_auth_method: 'client_secret_basic',
  scope: 'orders:read',
  management: false,
  created_at: at,
  updated_at: at,
}
const scope = { name: 'orders:read', description: 'Read orders', kind: 'custom', created_at: at, updated_at: at }
const key = { kid: 'key_01JGZ7Q3M8V2X9K4T6N1P5R0SB', alg: 'ES256', signs_from: at }
const endpoint = {
  id: 'ep_01JGZ7Q3M8V2X9K4T6N1P5R0SC',
  url: 'https://hooks.example.com/herald',
  description: 'Order sync',
  status: 'active',
  client_id: null,
  created_at: at,
  updated_at: at,
}

/** What a test delivery (POST /webhooks/endpoints/{id}/test) carries: which endpoint was tested, and when. */
export function testEventData(endpointId: string, sentAt: string): { endpoint_id: string; message: string; sent_at: string } {
  return { endpoint_id: endpointId, message: 'A test delivery from Herald: nothing happened, this checks the endpoint', sent_at: sentAt }
}

/** Every type Herald emits itself, as `GET /webhooks/event-types` lists them. */
export const BUILT_IN_EVENT_TYPES: readonly EventTypeDescription[] = [
  { name: 'oauth.client.created', description: 'A client was registered', example: client },
  { name: 'oauth.client.updated', description: "A client's metadata changed", example: client },
  { name: 'oauth.client.secret_rotated', description: "A client's secret was replaced; the old one no longer works", example: { client_id: client.client_id } },
  { name: 'oauth.client.deleted', description: 'A client was deleted', example: { client_id: client.client_id, client_name: client.client_name } },
  { name: 'oauth.client.registered', description: 'A client registered itself (RFC 7591); `initial_access_token_id` names the token it used, null in open mode', example: { ...client, initial_access_token_id: 'iat_01…' } },
  { name: 'oauth.scope.created', description: 'A scope was added to the registry', example: scope },
  { name: 'oauth.scope.updated', description: "A scope's description changed", example: scope },
  { name: 'oauth.scope.deleted', description: 'A scope was removed from the registry', example: { name: scope.name } },
  { name: 'oauth.settings.updated', description: "The account's settings changed; data holds all of them", example: { access_token_ttl: 3600, access_token_signing_alg: 'ES256' } },
  { name: 'oauth.key.rotated', description: 'New signing keys were published; they sign once JWKS caches have refreshed', example: { keys: [key] } },
  { name: 'oauth.key.revoked', description: 'A signing key was withdrawn at once', example: key },
  { name: 'oauth.token.revoked', description: 'An access token was revoked', example: { jti: '5f1c…', client_id: client.client_id, expires_at: at } },
  {
    name: 'oauth.token.exchanged',
    description: 'A client exchanged a subject token for an access token (RFC 8693); `act` is null when it impersonates the subject. Recorded only while an endpoint of the account subscribes to it',
    example: {
      jti: '9b2e…',
      client_id: client.client_id,
      subject: 'user-123',
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      subject_jti: '5f1c…',
      grant_id: 'flow_01…',
      act: { sub: client.client_id },
      scope: ['orders:read'],
      audience: 'https://api.example.com/orders',
      expires_at: at,
    },
  },
  { name: 'oauth.login.accepted', description: "The account's login app accepted a login", example: { client_id: client.client_id, subject: 'user-123', remember: true } },
  { name: 'oauth.login.rejected', description: "The account's login app rejected a login", example: { client_id: client.client_id, subject: null, error: 'access_denied' } },
  { name: 'oauth.consent.granted', description: 'A user consented to a client', example: { client_id: client.client_id, subject: 'user-123', scope: ['openid', 'email'], remember: true } },
  { name: 'oauth.refresh_token.reuse_detected', description: 'A spent refresh token was presented again; its grant is revoked', example: { grant_id: 'flow_01…', client_id: client.client_id, subject: 'user-123' } },
  {
    name: 'oauth.grant.revoked',
    description: "A user's grant to a client was revoked, with every token it issued: a code or refresh token reused, a refresh token revoked, or the consent revoked",
    example: { grant_id: 'flow_01…', client_id: client.client_id, subject: 'user-123', reason: 'refresh_token_reuse' },
  },
  { name: 'oauth.session.ended', description: "A user's browser session was ended", example: { session_id: 'ses_01…', subject: 'user-123', reason: 'revoked' } },
  { name: 'oauth.consent.revoked', description: "A user's consent to a client was revoked, with every grant made under it", example: { subject: 'user-123', client_id: client.client_id } },
  { name: 'oauth.consent.rejected', description: 'A user refused to consent to a client', example: { client_id: client.client_id, subject: 'user-123', error: 'access_denied' } },
  { name: 'oauth.device.accepted', description: "The account's app accepted a device's user code (RFC 8628); login and consent follow", example: { client_id: client.client_id, scope: ['openid', 'offline_access'] } },
  { name: 'oauth.device.rejected', description: 'A user refused a device verification; with the user code, the device is refused', example: { client_id: client.client_id } },
  { name: 'webhook.endpoint.created', description: 'An endpoint was added', example: endpoint },
  { name: 'webhook.endpoint.updated', description: "An endpoint's settings changed", example: endpoint },
  { name: 'webhook.endpoint.deleted', description: 'An endpoint was deleted; its undelivered deliveries were cancelled', example: { id: endpoint.id, url: endpoint.url } },
  {
    name: 'webhook.endpoint.disabled',
    description: 'An endpoint was disabled: by the account (manual), after failing continuously (failing) or because it answered 410 (gone)',
    example: { ...endpoint, status: 'disabled', disabled_reason: 'failing', disabled_at: at },
  },
  { name: 'webhook.endpoint.enabled', description: 'A disabled endpoint was enabled again; its held deliveries flow', example: endpoint },
  {
    name: 'webhook.test',
    description: 'A test delivery, sent to one endpoint by POST /webhooks/endpoints/{id}/test; no subscription ever receives it',
    example: testEventData(endpoint.id, at),
  },
  {
    name: 'webhook.delivery.failed',
    description: 'A delivery exhausted its retry schedule and is failed; it can be retried by hand',
    example: { delivery_id: 'dlv_01JGZ7Q3M8V2X9K4T6N1P5R0SD', event_id: 'evt_01JGZ7Q3M8V2X9K4T6N1P5R0SE', event_type: 'invoice.paid', endpoint_id: endpoint.id, attempt_count: 8, last_response_status: 503, last_error: null },
  },
]
