// A tiny relying party, so the example can be tried in a browser: "/" starts an authorization code flow with PKCE,
// "/callback" finishes it and keeps a session of this app, "/sign-out" ends it and asks Herald to end its own
// (RP-initiated logout), and Herald calls "/backchannel-logout" whenever a session the app took part in ends there
// (back-channel logout), so the app's session ends with Herald's however Herald's ended.
import { createHash, randomBytes } from 'node:crypto'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import { basicAuth, json } from './herald.mjs'
import { errorPage, homePage, signedInPage } from './pages.mjs'

const FLOW_COOKIE = 'demo_rp'
const SESSION_COOKIE = 'demo_rp_session'
/** A demo keeps its sessions in memory: the oldest go first past this many. */
const MAX_SESSIONS = 1000
/** Back-Channel Logout 1.0 §2.4: the member of `events` that makes a JWT a logout token. */
const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout'
const random = () => randomBytes(32).toString('base64url')

export function relyingParty({ discovery, client, appUrl, http, log }) {
  const redirectUri = `${appUrl}/callback`
  const jwks = createRemoteJWKSet(new URL(discovery.jwks_uri))
  /** This app's sessions, by the id in its cookie: `{ claims, idToken, signedOut?: { at, by }, heraldLogoutAt? }`. */
  const sessions = new Map()

  function sessionOf(request) {
    return sessions.get(http.getCookie(request, SESSION_COOKIE) ?? '')
  }

  /** The link that starts a sign-in, with what the callback will check waiting in a cookie that only it receives. */
  function signInLink(response) {
    // RFC 7636 (PKCE, S256), a state against forged callbacks (RFC 6749 §10.12) and a nonce that the ID token must
    // echo (OIDC Core §3.1.2.1). SameSite=Lax: the callback is a top-level navigation coming back from Herald.
    const flow = { state: random(), nonce: random(), verifier: random() }
    const url = new URL(discovery.authorization_endpoint)
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: redirectUri,
      scope: 'openid profile email',
      state: flow.state,
      nonce: flow.nonce,
      code_challenge: createHash('sha256').update(flow.verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString()
    http.setCookie(response, FLOW_COOKIE, Buffer.from(JSON.stringify(flow)).toString('base64url'), { path: '/callback', sameSite: 'Lax', maxAge: 600 })
    return url.href
  }

  /**
   * Back-Channel Logout 1.0 §2.6: the signature, issuer, audience and times checked as for an ID token (OIDC Core
   * §3.1.3.7, with the algorithm the client registered for its ID tokens), the explicit type (§2.4), then `sub` or
   * `sid`, the logout event, and no `nonce`.
   */
  async function verifyLogoutToken(token) {
    const { payload } = await jwtVerify(token, jwks, {
      issuer: discovery.issuer,
      audience: client.client_id,
      algorithms: [client.id_token_signed_response_alg],
      typ: 'logout+jwt',
      requiredClaims: ['iat', 'exp', 'jti', 'events'],
    })
    if (typeof payload.sub !== 'string' && typeof payload.sid !== 'string') throw new Error('the logout token names neither sub nor sid')
    const event = payload.events?.[LOGOUT_EVENT]
    if (typeof event !== 'object' || event === null) throw new Error('the logout token carries no back-channel logout event')
    if ('nonce' in payload) throw new Error('a logout token must not carry a nonce')
    return payload
  }

  return {
    home(request, response) {
      const session = sessionOf(request)
      if (session && !session.signedOut) return signedInPage({ claims: session.claims, signInUrl: signInLink(response) })
      return homePage({ signInUrl: signInLink(response), issuer: discovery.issuer, session })
    },

    async callback(request, response, query) {
      const flow = readFlow(http.getCookie(request, FLOW_COOKIE))
      http.clearCookie(response, FLOW_COOKIE, { path: '/callback' })
      if (!flow || query.get('state') !== flow.state) return [400, errorPage('This callback does not answer a sign-in started in this browser (state mismatch).')]
      // RFC 9207: the issuer says who sent the browser back, so a response from another server can't pass for Herald's.
      if (query.has('iss') && query.get('iss') !== discovery.issuer) return [400, errorPage(`Unexpected issuer ${query.get('iss')}.`)]
      if (query.has('error')) return [400, errorPage(`Herald answered ${query.get('error')}: ${query.get('error_description') ?? ''}`)]

      const tokens = await json(discovery.token_endpoint, {
        method: 'POST',
        headers: { authorization: basicAuth(client.client_id, client.client_secret) },
        body: new URLSearchParams({ grant_type: 'authorization_code', code: query.get('code') ?? '', redirect_uri: redirectUri, code_verifier: flow.verifier }),
      })
      // OIDC Core §3.1.3.7: signature against the account's JWKS, iss, aud and exp; then the nonce this sign-in sent.
      const { payload: claims } = await jwtVerify(tokens.id_token, jwks, { issuer: discovery.issuer, audience: client.client_id, algorithms: [client.id_token_signed_response_alg] })
      if (claims.nonce !== flow.nonce) return [400, errorPage('The ID token does not carry the nonce this sign-in sent.')]

      const id = random()
      sessions.set(id, { claims, idToken: tokens.id_token })
      if (sessions.size > MAX_SESSIONS) sessions.delete(sessions.keys().next().value)
      // SameSite=Lax: a form another site posts to /sign-out arrives without it, and so signs nobody out.
      http.setCookie(response, SESSION_COOKIE, id, { path: '/', sameSite: 'Lax' })
      // A new sign-in's flow cookie, set after the one cleared above: the browser keeps the later.
      return signedInPage({ claims, signInUrl: signInLink(response) })
    },

    /** RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0 §2): this app's session ends, then Herald's. */
    signOut(request) {
      const session = sessionOf(request)
      if (!session || session.signedOut) return { redirect: '/', status: 303 }
      session.signedOut = { at: new Date(), by: 'you' }
      const url = new URL(discovery.end_session_endpoint)
      url.search = new URLSearchParams({ id_token_hint: session.idToken, post_logout_redirect_uri: `${appUrl}/` }).toString()
      return { redirect: url.href, status: 303 }
    },

    /** Herald's back-channel logout (Back-Channel Logout 1.0 §2.5, §2.8): a form post with one logout token. */
    async backchannelLogout(request) {
      const form = await http.readForm(request)
      let claims
      try {
        claims = await verifyLogoutToken(form.get('logout_token') ?? '')
      } catch (error) {
        log(`refused a back-channel logout: ${error.message}`)
        return { status: 400, json: { error: 'invalid_request', error_description: error.message } }
      }
      const now = new Date()
      let ended = 0
      for (const session of sessions.values()) {
        if ((claims.sid !== undefined && session.claims.sid !== claims.sid) || (claims.sub !== undefined && session.claims.sub !== claims.sub)) continue
        session.heraldLogoutAt = now
        if (session.signedOut) continue
        session.signedOut = { at: now, by: 'Herald' }
        ended += 1
      }
      log(`back-channel logout from Herald for sub=${claims.sub} sid=${claims.sid}: ended ${ended} live session(s) of this app`)
      return { status: 200 }
    },
  }
}

function readFlow(value) {
  try {
    return value ? JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) : undefined
  } catch {
    return undefined
  }
}
