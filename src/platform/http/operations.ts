import type { SwaggerTransform } from '@fastify/swagger'

/** A group of operations in the OpenAPI document: a client generator's class or module, a section of /docs. */
interface Tag {
  name: string
  description: string
  /** Each operation's `operationId`, verbNoun in camelCase, and the route it names, `METHOD /path` as OpenAPI writes it. */
  operations: Record<string, string>
}

/**
 * What the OpenAPI document calls each operation and where it files it, in one table rather than beside each route:
 * clients generated from the document take their method names from these ids, so a rename is a breaking change and
 * should show up in one reviewable diff, named the way Svix's and Stripe's SDKs name theirs. The order is the reading
 * order of /docs. A route missing here has no operationId, which test/platform/api-reference.test.ts refuses.
 */
export const API_TAGS: Tag[] = [
  {
    name: 'Accounts',
    description: 'The operator API (HERALD_OPERATOR_TOKEN): creating, listing and disabling accounts.',
    operations: {
      createAccount: 'POST /accounts',
      listAccounts: 'GET /accounts',
      getAccount: 'GET /accounts/{accountId}',
      updateAccount: 'PATCH /accounts/{accountId}',
    },
  },
  {
    name: 'Clients',
    description: "The account's OAuth clients, registered from RFC 7591 metadata; management clients among them.",
    operations: {
      createClient: 'POST /accounts/{accountId}/oauth/clients',
      listClients: 'GET /accounts/{accountId}/oauth/clients',
      getClient: 'GET /accounts/{accountId}/oauth/clients/{clientId}',
      updateClient: 'PATCH /accounts/{accountId}/oauth/clients/{clientId}',
      deleteClient: 'DELETE /accounts/{accountId}/oauth/clients/{clientId}',
      rotateClientSecret: 'POST /accounts/{accountId}/oauth/clients/{clientId}/secret',
      createRegistrationToken: 'POST /accounts/{accountId}/oauth/registration-tokens',
      listRegistrationTokens: 'GET /accounts/{accountId}/oauth/registration-tokens',
      deleteRegistrationToken: 'DELETE /accounts/{accountId}/oauth/registration-tokens/{tokenId}',
    },
  },
  {
    name: 'Registration',
    description: 'Dynamic client registration (RFC 7591) and its management by the registered client (RFC 7592), when the account allows it (setting `registration`).',
    operations: {
      registerClient: 'POST /accounts/{accountId}/oauth/register',
      getClientRegistration: 'GET /accounts/{accountId}/oauth/register/{clientId}',
      replaceClientRegistration: 'PUT /accounts/{accountId}/oauth/register/{clientId}',
      deleteClientRegistration: 'DELETE /accounts/{accountId}/oauth/register/{clientId}',
    },
  },
  {
    name: 'Scopes',
    description: 'The scopes clients of the account may be allowed and request; the OpenID Connect ones come built in.',
    operations: {
      createScope: 'POST /accounts/{accountId}/oauth/scopes',
      listScopes: 'GET /accounts/{accountId}/oauth/scopes',
      getScope: 'GET /accounts/{accountId}/oauth/scopes/{name}',
      updateScope: 'PATCH /accounts/{accountId}/oauth/scopes/{name}',
      deleteScope: 'DELETE /accounts/{accountId}/oauth/scopes/{name}',
    },
  },
  {
    name: 'Tokens',
    description: 'The OAuth 2.0 token endpoints, for clients of the account: issuing (RFC 6749), introspection (RFC 7662) and revocation (RFC 7009).',
    operations: {
      issueToken: 'POST /accounts/{accountId}/oauth/tokens',
      introspectToken: 'POST /accounts/{accountId}/oauth/introspect',
      revokeToken: 'POST /accounts/{accountId}/oauth/revoke',
    },
  },
  {
    name: 'Authorization',
    description: 'The OpenID Connect endpoints a relying party sends browsers to, or calls with a user\'s token: authorization, pushed requests (RFC 9126), device authorization (RFC 8628), UserInfo and RP-initiated logout.',
    operations: {
      authorize: 'GET /accounts/{accountId}/oauth/authorize',
      authorizeWithPost: 'POST /accounts/{accountId}/oauth/authorize',
      pushAuthorizationRequest: 'POST /accounts/{accountId}/oauth/par',
      authorizeDevice: 'POST /accounts/{accountId}/oauth/device_authorization',
      verifyDevice: 'GET /accounts/{accountId}/oauth/device',
      getUserInfo: 'GET /accounts/{accountId}/oauth/userinfo',
      getUserInfoWithPost: 'POST /accounts/{accountId}/oauth/userinfo',
      logout: 'GET /accounts/{accountId}/oauth/logout',
      logoutWithPost: 'POST /accounts/{accountId}/oauth/logout',
    },
  },
  {
    name: 'Sign-in',
    description: "What the account's login, consent and logout apps read and answer (scope herald:login); each answer says where the browser goes next.",
    operations: {
      getLoginRequest: 'GET /accounts/{accountId}/oauth/login-requests/{challenge}',
      acceptLoginRequest: 'POST /accounts/{accountId}/oauth/login-requests/{challenge}/accept',
      rejectLoginRequest: 'POST /accounts/{accountId}/oauth/login-requests/{challenge}/reject',
      getConsentRequest: 'GET /accounts/{accountId}/oauth/consent-requests/{challenge}',
      acceptConsentRequest: 'POST /accounts/{accountId}/oauth/consent-requests/{challenge}/accept',
      rejectConsentRequest: 'POST /accounts/{accountId}/oauth/consent-requests/{challenge}/reject',
      getDeviceRequest: 'GET /accounts/{accountId}/oauth/device-requests/{challenge}',
      acceptDeviceRequest: 'POST /accounts/{accountId}/oauth/device-requests/{challenge}/accept',
      rejectDeviceRequest: 'POST /accounts/{accountId}/oauth/device-requests/{challenge}/reject',
      getLogoutRequest: 'GET /accounts/{accountId}/oauth/logout-requests/{challenge}',
      acceptLogoutRequest: 'POST /accounts/{accountId}/oauth/logout-requests/{challenge}/accept',
      rejectLogoutRequest: 'POST /accounts/{accountId}/oauth/logout-requests/{challenge}/reject',
    },
  },
  {
    name: 'Sessions',
    description: "A user's browser sessions and remembered consents, to list and to end.",
    operations: {
      listSessions: 'GET /accounts/{accountId}/oauth/sessions',
      endSessions: 'DELETE /accounts/{accountId}/oauth/sessions',
      listConsents: 'GET /accounts/{accountId}/oauth/consents',
      revokeConsents: 'DELETE /accounts/{accountId}/oauth/consents',
    },
  },
  {
    name: 'Keys',
    description: "The account's signing keys: the public JWKS, their lifecycle, rotation and emergency revocation.",
    operations: {
      getJwks: 'GET /accounts/{accountId}/.well-known/jwks.json',
      listKeys: 'GET /accounts/{accountId}/keys',
      rotateKeys: 'POST /accounts/{accountId}/keys/rotate',
      revokeKey: 'POST /accounts/{accountId}/keys/{kid}/revoke',
    },
  },
  {
    name: 'Discovery',
    description: "The account's authorization server metadata (RFC 8414, OpenID Connect Discovery 1.0).",
    operations: {
      getOpenIdConfiguration: 'GET /accounts/{accountId}/.well-known/openid-configuration',
      getAuthorizationServerMetadata: 'GET /.well-known/oauth-authorization-server/accounts/{accountId}',
      getIssuerAuthorizationServerMetadata: 'GET /accounts/{accountId}/.well-known/oauth-authorization-server',
    },
  },
  {
    name: 'Settings',
    description: "The account's token, sign-in and webhook settings.",
    operations: {
      getSettings: 'GET /accounts/{accountId}/settings',
      updateSettings: 'PATCH /accounts/{accountId}/settings',
    },
  },
  {
    name: 'Endpoints',
    description: 'The URLs webhooks are delivered to: their signing secrets, recovery of failed deliveries, test events and statistics.',
    operations: {
      createEndpoint: 'POST /accounts/{accountId}/webhooks/endpoints',
      listEndpoints: 'GET /accounts/{accountId}/webhooks/endpoints',
      getEndpoint: 'GET /accounts/{accountId}/webhooks/endpoints/{endpointId}',
      updateEndpoint: 'PATCH /accounts/{accountId}/webhooks/endpoints/{endpointId}',
      deleteEndpoint: 'DELETE /accounts/{accountId}/webhooks/endpoints/{endpointId}',
      getEndpointSecret: 'GET /accounts/{accountId}/webhooks/endpoints/{endpointId}/secret',
      rotateEndpointSecret: 'POST /accounts/{accountId}/webhooks/endpoints/{endpointId}/secret/rotate',
      recoverEndpoint: 'POST /accounts/{accountId}/webhooks/endpoints/{endpointId}/recover',
      getRecoveryJob: 'GET /accounts/{accountId}/webhooks/jobs/{jobId}',
      sendTestEvent: 'POST /accounts/{accountId}/webhooks/endpoints/{endpointId}/test',
      getEndpointStats: 'GET /accounts/{accountId}/webhooks/endpoints/{endpointId}/stats',
    },
  },
  {
    name: 'Subscriptions',
    description: 'Which event types go to which endpoint.',
    operations: {
      createSubscription: 'POST /accounts/{accountId}/webhooks/subscriptions',
      listSubscriptions: 'GET /accounts/{accountId}/webhooks/subscriptions',
      getSubscription: 'GET /accounts/{accountId}/webhooks/subscriptions/{subscriptionId}',
      deleteSubscription: 'DELETE /accounts/{accountId}/webhooks/subscriptions/{subscriptionId}',
    },
  },
  {
    name: 'Events',
    description: 'What happened: events Herald records and events the account publishes, each delivered to the endpoints subscribed to its type.',
    operations: {
      publishEvent: 'POST /accounts/{accountId}/webhooks/events',
      listEvents: 'GET /accounts/{accountId}/webhooks/events',
      getEvent: 'GET /accounts/{accountId}/webhooks/events/{eventId}',
      listEventTypes: 'GET /accounts/{accountId}/webhooks/event-types',
    },
  },
  {
    name: 'Deliveries',
    description: 'One event on its way to one endpoint, with every attempt made.',
    operations: {
      listDeliveries: 'GET /accounts/{accountId}/webhooks/deliveries',
      getDelivery: 'GET /accounts/{accountId}/webhooks/deliveries/{deliveryId}',
      retryDelivery: 'POST /accounts/{accountId}/webhooks/deliveries/{deliveryId}/retry',
    },
  },
  {
    name: 'Console',
    description: 'Single-use sign-in links to the web console: made by the operator, exchanged by the browser for a short-lived management token.',
    operations: {
      createConsoleLink: 'POST /accounts/{accountId}/console-links',
      exchangeConsoleLink: 'POST /accounts/{accountId}/console-links/exchange',
    },
  },
  {
    name: 'Health',
    description: 'Liveness and readiness, for load balancers and orchestrators.',
    operations: {
      getLiveness: 'GET /healthz',
      getReadiness: 'GET /readyz',
    },
  },
]

/** The document-level `tags`: each tag's name and description, in reading order. */
export const DOCUMENT_TAGS = API_TAGS.map(({ name, description }) => ({ name, description }))

const NAMES = new Map(API_TAGS.flatMap((tag) => Object.entries(tag.operations).map(([operationId, route]) => [route, { operationId, tags: [tag.name] }] as const)))

/**
 * @fastify/swagger's `transform`: gives a route's operation in the document its name and tag from the table. It
 * changes only the document, never the schema Fastify validates with; routes the table doesn't name pass unchanged.
 */
export const nameOperation: SwaggerTransform = ({ schema, url, route }) => {
  const names = typeof route.method === 'string' ? NAMES.get(`${route.method} ${url.replace(/:(\w+)/g, '{$1}')}`) : undefined
  return { schema: names ? { ...schema, ...names } : schema, url }
}
