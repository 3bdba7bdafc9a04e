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
<ul id="scopes">${scopes.map((scope) => html`<li><code>${scope}</code> ${SCOPE_TEXT[scope] ?? ''}</li>`)}</ul>
<form method="post" action="/consent">
  <input type="hidden" name="challenge" value="${challenge}">
  <input type="hidden" name="csrf" value="${csrf}">
  <label><input type="checkbox" name="remember" value="1" checked> Remember this decision</label>
  <button type="submit" name="action" value="accept">Allow</button>
  <button type="submit" name="action" value="reject">Deny</button>
</form>`)
}

export function homePage({ authorizationUrl, issuer }) {
  return page('Demo relying party', html`
<p>This page plays an application that lets its users sign in with Herald (<code>${issuer}</code>).</p>
<p><a class="button" href="${authorizationUrl}">Sign in with Herald</a></p>`)
}

export function claimsPage({ claims }) {
  return page('Signed in', html`
<p>Herald sent back an ID token with these claims:</p>
<pre id="claims">${JSON.stringify(claims, null, 2)}</pre>
<p><a href="/">Sign in again</a></p>`)
}

export function errorPage(message) {
  return page('Something went wrong', html`<p class="error" role="alert">${message}</p><p><a href="/">Start again</a></p>`)
}
