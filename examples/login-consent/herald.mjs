// The calls this example makes to Herald: management tokens, the account's settings, the demo clients, and the
// login, consent, logout and device challenges (docs/authorization.md, "Sign-in (OpenID Connect)", "Logout" and
// "Devices (RFC 8628)").

const DEMO_CLIENT_NAME = 'Demo relying party (examples/login-consent)'
const DEVICE_CLIENT_NAME = 'Demo device (examples/login-consent)'
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

/** Herald's API for one account, through its management client's credentials. */
export async function connect({ issuer, clientId, clientSecret }) {
  const discovery = await json(`${issuer}/.well-known/openid-configuration`)
  const tokens = new Map()

  // One token per scope set, reused until shortly before it expires: each task asks only for what it needs.
  async function token(scope) {
    const cached = tokens.get(scope)
    if (cached && cached.expiresAt > Date.now() + 30_000) return cached.value
    const answer = await json(discovery.token_endpoint, {
      method: 'POST',
      headers: { authorization: basicAuth(clientId, clientSecret) },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope }),
    })
    tokens.set(scope, { value: answer.access_token, expiresAt: Date.now() + answer.expires_in * 1000 })
    return answer.access_token
  }

  async function call(scope, method, path, body) {
    return json(`${issuer}${path}`, {
      method,
      headers: { authorization: `Bearer ${await token(scope)}`, ...(body && { 'content-type': 'application/json' }) },
      body: body && JSON.stringify(body),
    })
  }

  const challenge = (kind) => ({
    get: (id) => call('herald:login', 'GET', `/oauth/${kind}-requests/${encodeURIComponent(id)}`),
    accept: (id, body) => call('herald:login', 'POST', `/oauth/${kind}-requests/${encodeURIComponent(id)}/accept`, body),
    reject: (id, body) => call('herald:login', 'POST', `/oauth/${kind}-requests/${encodeURIComponent(id)}/reject`, body),
  })

  return { discovery, call, login: challenge('login'), consent: challenge('consent'), logout: challenge('logout'), device: challenge('device') }
}

const SETUP = 'herald:settings:write herald:clients:read herald:clients:write'

/**
 * Points the account's login, consent, logout and device pages at this app, and registers the demo relying party and
 * the demo device, or reuses the ones an earlier run registered: their metadata is brought up to date and the relying
 * party gets a new secret, since Herald shows a secret only when it makes one. Answers the relying party's client,
 * the device's (public: a device can't keep a secret), and why Herald refused the back-channel logout URI, if it did.
 */
export async function configureAccount(herald, appUrl) {
  await herald.call(SETUP, 'PATCH', '/settings', {
    login_url: `${appUrl}/login`,
    consent_url: `${appUrl}/consent`,
    logout_url: `${appUrl}/logout`,
    post_logout_url: `${appUrl}/logout-finished`,
    device_verification_url: `${appUrl}/device`,
    device_done_url: `${appUrl}/device-done`,
  })
  const device = await registerClient(herald, {
    client_name: DEVICE_CLIENT_NAME,
    redirect_uris: [],
    grant_types: [DEVICE_GRANT, 'refresh_token'],
    response_types: [],
    token_endpoint_auth_method: 'none',
    scope: 'openid profile email offline_access',
  })
  return { device, ...(await registerRelyingParty(herald, appUrl)) }
}

async function registerRelyingParty(herald, appUrl) {
  const metadata = {
    client_name: DEMO_CLIENT_NAME,
    redirect_uris: [`${appUrl}/callback`],
    post_logout_redirect_uris: [`${appUrl}/`],
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
    scope: 'openid profile email',
  }
  const backchannel = { backchannel_logout_uri: `${appUrl}/backchannel-logout`, backchannel_logout_session_required: true }
  try {
    return { client: await registerClient(herald, { ...metadata, ...backchannel }) }
  } catch (error) {
    // Herald calls a back-channel logout URI like a webhook endpoint: plain http to this machine only in its
    // development setup, or where HERALD_WEBHOOK_ALLOW_HTTP and HERALD_WEBHOOK_ALLOWED_CIDRS allow it.
    const refusal = error.problem?.errors?.find((field) => field.pointer === '/body/backchannel_logout_uri')
    if (!refusal) throw error
    return { client: await registerClient(herald, { ...metadata, backchannel_logout_uri: null }), backchannelRefused: refusal.message }
  }
}

async function registerClient(herald, metadata) {
  const existing = await findClient(herald, SETUP, metadata.client_name)
  if (!existing) return herald.call(SETUP, 'POST', '/oauth/clients', metadata)
  const updated = await herald.call(SETUP, 'PATCH', `/oauth/clients/${existing.client_id}`, metadata)
  return metadata.token_endpoint_auth_method === 'none' ? updated : herald.call(SETUP, 'POST', `/oauth/clients/${existing.client_id}/secret`)
}

async function findClient(herald, scope, name) {
  let cursor
  do {
    const query = new URLSearchParams({ limit: '100', ...(cursor && { cursor }) })
    const page = await herald.call(scope, 'GET', `/oauth/clients?${query}`)
    const found = page.data.find((client) => client.client_name === name)
    if (found) return found
    cursor = page.next_cursor
  } while (cursor)
  return undefined
}

/** RFC 6749 §2.3.1: the client id and secret are form-encoded before they are joined and base64-encoded. */
export function basicAuth(id, secret) {
  const encode = (value) => encodeURIComponent(value).replace(/%20/g, '+')
  return `Basic ${Buffer.from(`${encode(id)}:${encode(secret)}`).toString('base64')}`
}

/** A JSON request to Herald; anything but a 2xx becomes an error carrying Herald's own explanation. */
export async function json(url, init = {}) {
  const response = await fetch(url, init)
  const text = await response.text()
  const body = text && /json/.test(response.headers.get('content-type') ?? '') ? JSON.parse(text) : text
  if (!response.ok) {
    const why = body.detail ?? body.error_description ?? body.title ?? body.error ?? text
    // 502 to the browser: the page failed because Herald refused a call.
    throw Object.assign(new Error(`${init.method ?? 'GET'} ${new URL(url).pathname}: ${response.status} ${why}`), { status: 502, problem: body })
  }
  return body
}
