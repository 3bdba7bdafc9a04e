// The example's pages. Every value goes through html``, which escapes it unless it is itself html``.

const SAFE = Symbol('safe html')
const ENTITIES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

export function html(strings, ...values) {
  return { [SAFE]: strings.reduce((out, string, index) => out + render(values[index - 1]) + string) }
}

function render(value) {
  if (Array.isArray(value)) return value.map(render).join('')
  if (typeof value === 'object' && value !== null && SAFE in value) return value[SAFE]
  return String(value ?? '').replace(/[&<>"']/g, (char) => ENTITIES[char])
}

/** A whole document around `body`. */
export function page(title, body) {
  return render(html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 32rem; margin: 3rem auto; padding: 0 1rem; color: #222 }
  label { display: block; margin: .75rem 0 }
  input[type=text], input[type=password] { display: block; width: 100%; padding: .4rem; box-sizing: border-box }
  button, .button { padding: .5rem 1rem; margin-right: .5rem; font: inherit }
  .error { color: #a00 } .note { color: #666; font-size: .9rem }
  pre { background: #f4f4f4; padding: 1rem; overflow-x: auto }
</style>
</head>
<body>
<p class="note">Herald login and consent example: not for production.</p>
<h1>${title}</h1>
${body}
</body>
</html>
`)
}

const clientName = (client) => client.client_name || client.client_id

/**
 * A client that describes itself in a metadata document names itself: only the host of its URL is vouched for, by
 * HTTPS. Say so, as draft-ietf-oauth-client-id-metadata-document's security considerations ask.
 */
const unvetted = (client) =>
  client.source === 'metadata_document' ? html`<p class="note" id="unvetted">This app names itself; it is served from <strong>${new URL(client.client_id).host}</strong>. Allow it only if you trust that site.</p>` : ''

export function loginPage({ challenge, client, csrf, username = '', error }) {
  return page('Sign in', html`
<p>to continue to <strong>${clientName(client)}</strong>. The demo user is <code>demo</code>, password <code>demo</code>.</p>
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" action="/login">
  <input type="hidden" name="challenge" value="${challenge}">
  <input type="hidden" name="csrf" value="${csrf}">
  <label>Username <input type="text" name="username" value="${username}" autocomplete="username" required autofocus></label>
  <label>Password <input type="password" name="password" autocomplete="current-password" required></label>
  <label><input type="checkbox" name="remember" value="1" checked> Remember me</label>
  <button type="submit" name="action" value="accept">Sign in</button>
  <button type="submit" name="action" value="reject" formnovalidate>Cancel</button>
</form>`)
}

const SCOPE_TEXT = {
  openid: 'Know who you are (your user id)',
  profile: 'See your name',
  email: 'See your email address',
  offline_access: 'Keep access while you are away',
}

export function consentPage({ challenge, client, scopes, csrf }) {
  return page('Allow access?', html`
<p><strong>${clientName(client)}</strong> asks to:</p>
${unvetted(client)}
<ul id="scopes">${scopes.map((scope) => html`<li><code>${scope}</code> ${SCOPE_TEXT[scope] ?? ''}</li>`)}</ul>
<form method="post" action="/consent">
  <input type="hidden" name="challenge" value="${challenge}">
  <input type="hidden" name="csrf" value="${csrf}">
  <label><input type="checkbox" name="remember" value="1" checked> Remember this decision</label>
  <button type="submit" name="action" value="accept">Allow</button>
  <button type="submit" name="action" value="reject">Deny</button>
</form>`)
}

export function logoutPage({ challenge, subject, csrf }) {
  return page('Sign out of Herald?', html`
<p>${subject ? html`You are signed in as <strong>${subject}</strong>.` : 'This browser has no session at Herald.'} Signing out of Herald ends
your session there, and Herald tells the applications you used with it.</p>
<form method="post" action="/logout">
  <input type="hidden" name="challenge" value="${challenge}">
  <input type="hidden" name="csrf" value="${csrf}">
  <button type="submit" name="action" value="accept">Sign out</button>
  <button type="submit" name="action" value="reject">Stay signed in</button>
</form>`)
}

/** The account's post_logout_url: where Herald sends the browser after a logout that names no page of the client's. */
export function logoutFinishedPage() {
  return page('Logout finished', html`
<p>Herald has finished the logout. It sends the browser here, the account's <code>post_logout_url</code>, when the
logout names no page of an application to return to.</p>
<p><a href="/">Go to the demo relying party</a></p>`)
}

/**
 * The account's device_verification_url: the user types the code their device shows (prefilled when they came from
 * its verification_uri_complete). Herald ignores case, dashes and spaces in it.
 */
export function devicePage({ challenge, userCode = '', attemptsLeft, csrf, error }) {
  return page('Connect a device', html`
<p>Type the code your device shows to sign it in.</p>
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" action="/device">
  <input type="hidden" name="challenge" value="${challenge}">
  <input type="hidden" name="csrf" value="${csrf}">
  <label>Code <input type="text" name="user_code" value="${userCode}" maxlength="64" autocomplete="off" autocapitalize="characters" spellcheck="false" required autofocus></label>
  <p class="note">After ${attemptsLeft} more wrong codes, open the device's link again.</p>
  <button type="submit" name="action" value="accept">Continue</button>
  <button type="submit" name="action" value="reject" formnovalidate>Cancel</button>
</form>`)
}

/** A device verification Herald no longer takes: answered, spent by wrong codes, or lapsed. */
export function deviceSpentPage({ verificationUri }) {
  return page('Start again', html`
<p class="error" role="alert">This code entry is used up: it was answered already, took too many wrong codes, or
expired.</p>
<p><a href="${verificationUri}">Enter the code again</a></p>`)
}

/** The account's device_done_url, where Herald ends a device's sign-in; `refusal` says why it was refused, if it was. */
export function deviceDonePage({ refusal }) {
  if (refusal !== undefined) return page('Device not connected', html`<p role="status">Your device was not signed in: ${refusal}. You can close this page.</p>`)
  return page('Device connected', html`<p role="status">You can go back to your device: it signs in within a few seconds.</p>`)
}

const time = (date) => `${date.toISOString().slice(11, 19)} UTC`

/** How this browser's last session of the relying party ended, if it had one. */
function signedOutNote(session) {
  if (session.signedOut.by === 'Herald') {
    return html`<p id="signed-out" role="status">Signed out by Herald at ${time(session.signedOut.at)}: Herald's back-channel logout ended your session here.</p>`
  }
  const herald = session.heraldLogoutAt
    ? html`Herald's back-channel logout for that session arrived at ${time(session.heraldLogoutAt)}.`
    : "Herald's back-channel logout for that session has not arrived: it comes once Herald ends the session."
  return html`<p id="signed-out" role="status">You signed out at ${time(session.signedOut.at)}. ${herald}</p>`
}

export function homePage({ signInUrl, issuer, session }) {
  return page('Demo relying party', html`
<p>This page plays an application that lets its users sign in with Herald (<code>${issuer}</code>).</p>
${session ? signedOutNote(session) : ''}
<p><a class="button" href="${signInUrl}">Sign in with Herald</a></p>`)
}

/** `signInUrl` signs in again: with Herald's session remembered, no form shows on the way. */
export function signedInPage({ claims, signInUrl }) {
  return page('Signed in', html`
<p>Herald sent back an ID token with these claims:</p>
<pre id="claims">${JSON.stringify(claims, null, 2)}</pre>
<form method="post" action="/sign-out">
  <button type="submit">Sign out</button>
  <a href="${signInUrl}">Sign in again</a>
</form>`)
}

export function errorPage(message) {
  return page('Something went wrong', html`<p class="error" role="alert">${message}</p><p><a href="/">Start again</a></p>`)
}
