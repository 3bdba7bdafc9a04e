// A tiny relying party, so the example can be tried in a browser: "/" starts an authorization code flow with PKCE,
// "/callback" finishes it and shows the ID token's claims.
import { createHash, randomBytes } from 'node:crypto'
import { basicAuth, json } from './herald.mjs'
import { claimsPage, errorPage, homePage } from './pages.mjs'

const COOKIE = 'demo_rp'
const random = () => randomBytes(32).toString('base64url')

export function relyingParty({ discovery, client, redirectUri, cookies }) {
  return {
    home(request, response) {
      // RFC 7636 (PKCE, S256), a state against forged callbacks (RFC 6749 §10.12) and a nonce that the ID token must
      // echo (OIDC Core §3.1.2.1). They wait for the callback in a short-lived cookie that only /callback receives:
      // a demo needs no server-side store.
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
      // SameSite=Lax: the callback is a top-level navigation coming back from Herald.
      cookies.set(response, COOKIE, Buffer.from(JSON.stringify(flow)).toString('base64url'), { path: '/callback', sameSite: 'Lax', maxAge: 600 })
      return [200, homePage({ authorizationUrl: url.href, issuer: discovery.issuer })]
    },

    async callback(request, response, query) {
      const flow = readFlow(cookies.get(request, COOKIE))
      cookies.clear(response, COOKIE, { path: '/callback' })
      if (!flow || query.get('state') !== flow.state) return [400, errorPage('This callback does not answer a sign-in started in this browser (state mismatch).')]
      // RFC 9207: the issuer says who sent the browser back, so a response from another server can't pass for Herald's.
      if (query.has('iss') && query.get('iss') !== discovery.issuer) return [400, errorPage(`Unexpected issuer ${query.get('iss')}.`)]
      if (query.has('error')) return [400, errorPage(`Herald answered ${query.get('error')}: ${query.get('error_description') ?? ''}`)]

      const tokens = await json(discovery.token_endpoint, {
        method: 'POST',
        headers: { authorization: basicAuth(client.client_id, client.client_secret) },
        body: new URLSearchParams({ grant_type: 'authorization_code', code: query.get('code') ?? '', redirect_uri: redirectUri, code_verifier: flow.verifier }),
      })
      // Decoding only, which is enough for a demo that got the token straight from the token endpoint over a
      // connection it opened. A real relying party validates it (signature against the JWKS, iss, aud, exp, nonce:
      // OIDC Core §3.1.3.7) with a library such as openid-client.
      const claims = JSON.parse(Buffer.from(tokens.id_token.split('.')[1] ?? '', 'base64url').toString('utf8'))
      if (claims.nonce !== flow.nonce) return [400, errorPage('The ID token does not carry the nonce this sign-in sent.')]
      return [200, claimsPage({ claims })]
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
