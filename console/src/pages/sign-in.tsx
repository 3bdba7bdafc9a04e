import { useState } from 'preact/hooks'
import { signIn, signOutReason } from '../session.js'

const REMEMBERED_ACCOUNT = 'herald.console.account'

/**
 * Keeps the account id of a sign-in in this browser's localStorage, so that the form after a reload starts with it.
 * The id is no secret (every API URL names it); the token and the client's credentials are never stored.
 */
export function rememberAccount(accountId: string): void {
  try {
    localStorage.setItem(REMEMBERED_ACCOUNT, accountId)
  } catch {
    // Storage turned off: the form starts empty, as it always did.
  }
}

function rememberedAccount(): string {
  try {
    return localStorage.getItem(REMEMBERED_ACCOUNT) ?? ''
  } catch {
    return ''
  }
}

/** Sign-in with a management client: the token stays in this page's memory, the secret is used once. */
export function SignIn(props: { accountId?: string }) {
  const [error, setError] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)
  // A spent sign-in link names its account: the form starts with it, or else with the last one signed in to.
  const [account, setAccount] = useState(() => props.accountId ?? rememberedAccount())
  const reason = signOutReason()
  const submit = async (event: Event) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget as HTMLFormElement)
    const field = (name: string) => String(form.get(name) ?? '').trim()
    setBusy(true)
    const failure = await signIn(field('account'), field('client_id'), String(form.get('client_secret') ?? ''))
    // On success the session change replaces this page; only a failure is left to show.
    if (failure !== undefined) {
      setError(failure)
      setBusy(false)
    }
  }
  return (
    <main class="sign-in">
      <h1>Herald console</h1>
      <p class="muted">
        Sign in with a management client of your account: its id and secret, as <code>herald accounts create</code> printed them.
      </p>
      {reason && !error && (
        <p class="notice" role="status">
          {reason}
        </p>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <form onSubmit={submit}>
        <label for="account">Account id</label>
        <input id="account" name="account" required value={account} onInput={(event) => setAccount(event.currentTarget.value)} autoComplete="off" spellcheck={false} placeholder="acct_…" />
        <label for="client_id">Client id</label>
        <input id="client_id" name="client_id" required autoComplete="username" spellcheck={false} />
        <label for="client_secret">Client secret</label>
        <input id="client_secret" name="client_secret" type="password" required autoComplete="current-password" />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p class="muted small">The token is kept in this tab's memory only: reloading the page asks you to sign in again, and brings you back to the same page. This browser remembers the account id alone.</p>
    </main>
  )
}
