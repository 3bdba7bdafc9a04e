// Herald's login and consent example: the app an account's login_url, consent_url, logout_url and device pages point
// at, plus a demo relying party to try it with. Run: HERALD_ISSUER=… HERALD_CLIENT_ID=… HERALD_CLIENT_SECRET=… node examples/login-consent/server.mjs
import { randomBytes, timingSafeEqual } from 'node:crypto'
import { createServer } from 'node:http'
import { configureAccount, connect } from './herald.mjs'
import { consentPage, deviceDonePage, devicePage, deviceSpentPage, errorPage, loginPage, logoutFinishedPage, logoutPage } from './pages.mjs'
import { relyingParty } from './relying-party.mjs'

// The one user this example knows. A real app looks its users up and checks a password hash.
const DEMO_USER = { username: 'demo', password: 'demo', subject: 'user_demo', name: 'Demo User', email: 'demo@example.com' }
const CSRF_COOKIE = 'demo_csrf'
const FORM_LIMIT = 16 * 1024
const NOT_FROM_HERALD = 'Herald sends the browser here with a challenge: start from the home page.'

const env = readEnv(process.env)
const appUrl = `http://127.0.0.1:${env.port}`
// Listening comes first, so that a port in use stops the app before it changes the account's settings or the demo
// client's secret; requests are answered once both are set.
const server = createServer()
server.on('error', exitWith(`Could not listen on port ${env.port}`))
await new Promise((resolve) => server.listen(env.port, '127.0.0.1', resolve))
const herald = await connect(env).catch(exitWith('Herald is unreachable or refused the management client'))
const { client, device, backchannelRefused } = await configureAccount(herald, appUrl).catch(exitWith("Could not set up the account's login and consent"))
// RFC 8628 §3.3: where the user goes to type the code, as the device shows it.
const verificationUri = `${env.issuer}/oauth/device`
if (backchannelRefused) {
  console.warn(`Herald refused the back-channel logout URI (${backchannelRefused}): sign-in and Sign out work, but Herald can't tell the relying party of a logout. Its development setup (npm start) allows http on this machine; otherwise set HERALD_WEBHOOK_ALLOW_HTTP=true and HERALD_WEBHOOK_ALLOWED_CIDRS=127.0.0.0/8 on Herald.`)
}
const rp = relyingParty({ discovery: herald.discovery, client, appUrl, http: { getCookie, setCookie, clearCookie, readForm }, log: console.log })

const routes = {
  'GET /': rp.home,
  'GET /callback': rp.callback,
  'POST /sign-out': rp.signOut,
  'POST /backchannel-logout': rp.backchannelLogout,
  'GET /login': showLogin,
  'POST /login': submitLogin,
  'GET /consent': showConsent,
  'POST /consent': submitConsent,
  'GET /logout': showLogout,
  'POST /logout': submitLogout,
  'GET /logout-finished': logoutFinishedPage,
  'GET /device': showDevice,
  'POST /device': submitDevice,
  'GET /device-done': showDeviceDone,
}

async function showLogin(request, response, query) {
  const challenge = query.get('login_challenge')
  if (!challenge) return [400, errorPage(NOT_FROM_HERALD)]
  const login = await herald.login.get(challenge)
  console.log(`login request for ${login.client.client_id}: skip=${login.skip}`)
  // Hydra's rule: skip means Herald already knows this browser's user (its herald_session cookie), so the app
  // accepts at once with that subject rather than asking again.
  if (login.skip) return redirect((await herald.login.accept(challenge, { subject: login.subject })).redirect_to, 302)
  return loginPage({ challenge, client: login.client, csrf: csrfToken(request, response) })
}

async function submitLogin(request, response) {
  const form = await readForm(request)
  const challenge = form.get('challenge') ?? ''
  if (!csrfMatches(request, form)) return [403, errorPage('This form did not come from this app (CSRF check failed).')]
  if (form.get('action') !== 'accept') {
    return redirect((await herald.login.reject(challenge, { error: 'access_denied', error_description: 'The user cancelled the sign-in' })).redirect_to)
  }
  if (form.get('username') !== DEMO_USER.username || form.get('password') !== DEMO_USER.password) {
    const { client } = await herald.login.get(challenge)
    return loginPage({ challenge, client, csrf: csrfToken(request, response), username: form.get('username'), error: 'Wrong username or password.' })
  }
  const accepted = await herald.login.accept(challenge, { subject: DEMO_USER.subject, remember: form.get('remember') === '1' })
  return redirect(accepted.redirect_to)
}

async function showConsent(request, response, query) {
  const challenge = query.get('consent_challenge')
  if (!challenge) return [400, errorPage(NOT_FROM_HERALD)]
  const consent = await herald.consent.get(challenge)
  // skip: this user already granted this client these scopes and asked Herald to remember it.
  if (consent.skip) return redirect((await acceptConsent(challenge, consent, false)).redirect_to, 302)
  return consentPage({ challenge, client: consent.client, scopes: consent.requested_scope, csrf: csrfToken(request, response) })
}

async function submitConsent(request) {
  const form = await readForm(request)
  const challenge = form.get('challenge') ?? ''
  if (!csrfMatches(request, form)) return [403, errorPage('This form did not come from this app (CSRF check failed).')]
  if (form.get('action') !== 'accept') {
    return redirect((await herald.consent.reject(challenge, { error: 'access_denied', error_description: 'The user denied access' })).redirect_to)
  }
  // The scopes come from Herald, not from the form, so a tampered form can't grant more than was asked.
  const consent = await herald.consent.get(challenge)
  return redirect((await acceptConsent(challenge, consent, form.get('remember') === '1')).redirect_to)
}

/** Grants every requested scope, with the user's claims that those scopes cover (OIDC Core §5.4). */
function acceptConsent(challenge, consent, remember) {
  const scopes = consent.requested_scope
  const claims = {
    ...(scopes.includes('profile') && { name: DEMO_USER.name, preferred_username: DEMO_USER.username }),
    ...(scopes.includes('email') && { email: DEMO_USER.email, email_verified: true }),
  }
  return herald.consent.accept(challenge, { grant_scope: scopes, remember, session: { id_token: claims } })
}

async function showLogout(request, response, query) {
  const challenge = query.get('logout_challenge')
  if (!challenge) return [400, errorPage(NOT_FROM_HERALD)]
  const logout = await herald.logout.get(challenge)
  console.log(`logout request for ${logout.subject ?? 'a browser without a session'} from ${logout.client_id ?? 'no client'}`)
  // RP-Initiated Logout 1.0 §2: the OP should ask whether to sign out of it too; "Stay signed in" rejects.
  return logoutPage({ challenge, subject: logout.subject, csrf: csrfToken(request, response) })
}

async function submitLogout(request) {
  const form = await readForm(request)
  const challenge = form.get('challenge') ?? ''
  if (!csrfMatches(request, form)) return [403, errorPage('This form did not come from this app (CSRF check failed).')]
  const answer = form.get('action') === 'accept' ? herald.logout.accept(challenge) : herald.logout.reject(challenge)
  return redirect((await answer).redirect_to)
}

async function showDevice(request, response, query) {
  const challenge = query.get('device_challenge')
  if (!challenge) return [400, errorPage(NOT_FROM_HERALD)]
  return deviceForm(request, response, challenge, { userCode: query.get('user_code') ?? '' })
}

async function submitDevice(request, response) {
  const form = await readForm(request)
  const challenge = form.get('challenge') ?? ''
  if (!csrfMatches(request, form)) return [403, errorPage('This form did not come from this app (CSRF check failed).')]
  const userCode = form.get('user_code') ?? ''
  // Cancel with the code typed refuses that device too: its next poll answers access_denied.
  const answer = form.get('action') === 'accept'
    ? herald.device.accept(challenge, { user_code: userCode })
    : herald.device.reject(challenge, userCode ? { user_code: userCode } : {})
  try {
    return redirect((await answer).redirect_to)
  } catch (error) {
    // A wrong code (400 invalid_user_code) or too many in the account (429): the form again, with Herald's reason.
    if (error.problem?.status === 400 || error.problem?.status === 429) return deviceForm(request, response, challenge, { userCode, error: error.problem.detail ?? error.problem.title })
    unlessSpent(error)
    return spentPage()
  }
}

/** The code entry form, or a page that says to start again once Herald no longer takes the challenge. */
async function deviceForm(request, response, challenge, { userCode, error }) {
  const waiting = await herald.device.get(challenge).catch(unlessSpent)
  if (!waiting) return spentPage()
  return devicePage({ challenge, userCode, attemptsLeft: waiting.attempts_left, csrf: csrfToken(request, response), error })
}

/** Herald's 404 (lapsed) and 409 (answered, or spent by wrong codes) say the challenge is done with; other errors stand. */
function unlessSpent(error) {
  if (error.problem?.status === 404 || error.problem?.status === 409) return undefined
  throw error
}

function spentPage() {
  return [409, deviceSpentPage({ verificationUri })]
}

function showDeviceDone(_request, _response, query) {
  return deviceDonePage({ refusal: query.has('error') ? (query.get('error_description') ?? query.get('error')) : undefined })
}

// CSRF: a double-submit token (OWASP's CSRF cheat sheet). The cookie is SameSite=Strict, so a cross-site form post
// doesn't carry it, and another site can't read it to copy it into the form either.
function csrfToken(request, response) {
  const token = getCookie(request, CSRF_COOKIE) ?? randomBytes(32).toString('base64url')
  setCookie(response, CSRF_COOKIE, token, { path: '/', sameSite: 'Strict' })
  return token
}

function csrfMatches(request, form) {
  const cookie = Buffer.from(getCookie(request, CSRF_COOKIE) ?? '')
  const field = Buffer.from(form.get('csrf') ?? '')
  return cookie.length > 0 && cookie.length === field.length && timingSafeEqual(cookie, field)
}

function getCookie(request, name) {
  for (const pair of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = pair.trim().split('=')
    if (key === name) return value.join('=')
  }
  return undefined
}

// No Secure attribute: the example serves plain http on loopback. An app on https sets it.
function setCookie(response, name, value, { path, sameSite, maxAge }) {
  const cookie = `${name}=${value}; Path=${path}; HttpOnly; SameSite=${sameSite}${maxAge === undefined ? '' : `; Max-Age=${maxAge}`}`
  response.appendHeader('set-cookie', cookie)
}

function clearCookie(response, name, { path }) {
  setCookie(response, name, '', { path, sameSite: 'Lax', maxAge: 0 })
}

async function readForm(request) {
  if (!/^application\/x-www-form-urlencoded\b/.test(request.headers['content-type'] ?? '')) throw new HttpError(415, 'Expected a form post.')
  let body = ''
  for await (const chunk of request) {
    body += chunk
    if (body.length > FORM_LIMIT) throw new HttpError(413, 'The form is too large.')
  }
  return new URLSearchParams(body)
}

/** 303 after a form post, so the browser follows with a GET (RFC 9110 §15.4.4). */
function redirect(location, status = 303) {
  return { redirect: location, status }
}

class HttpError extends Error {
  constructor(status, message) {
    super(message)
    this.status = status
  }
}

async function handle(request, response) {
  const url = new URL(request.url ?? '/', appUrl)
  const route = routes[`${request.method} ${url.pathname}`]
  let result
  try {
    result = route ? await route(request, response, url.searchParams) : [404, errorPage('There is no such page.')]
  } catch (error) {
    if (!(error instanceof HttpError)) console.error(error)
    result = [error.status ?? 500, errorPage(error.message)]
  }
  if (result.redirect) return response.writeHead(result.status, { location: result.redirect }).end()
  // An answer to Herald rather than a page (the back-channel logout): JSON, or nothing.
  if (result.status !== undefined) {
    const headers = { 'cache-control': 'no-store', ...(result.json && { 'content-type': 'application/json' }) }
    return response.writeHead(result.status, headers).end(result.json ? JSON.stringify(result.json) : undefined)
  }
  const [status, body] = Array.isArray(result) ? result : [200, result]
  response.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'",
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  })
  response.end(body)
}

function readEnv(vars) {
  const missing = ['HERALD_ISSUER', 'HERALD_CLIENT_ID', 'HERALD_CLIENT_SECRET'].filter((name) => !vars[name])
  if (missing.length > 0) {
    console.error(`Missing ${missing.join(', ')}: give the account's issuer and its management client, as printed by\n  npx herald accounts create --name acme --json`)
    process.exit(1)
  }
  // EXAMPLE_PORT, not PORT: a shell that started Herald with PORT would put the app on Herald's port.
  return { issuer: vars.HERALD_ISSUER.replace(/\/$/, ''), clientId: vars.HERALD_CLIENT_ID, clientSecret: vars.HERALD_CLIENT_SECRET, port: Number(vars.EXAMPLE_PORT ?? 3000) }
}

function exitWith(what) {
  return (error) => {
    console.error(`${what}: ${error.message}`)
    process.exit(1)
  }
}

server.on('request', handle)
console.log(`Device client ${device.client_id}: start a device sign-in with curl -d client_id=${device.client_id} -d 'scope=openid offline_access' ${herald.discovery.device_authorization_endpoint}`)
console.log(`Login and consent example ready: open ${appUrl}/ and sign in as demo / demo`)
