import { useState } from 'preact/hooks'
import { type Page, api, query } from '../api.js'
import { Link, type Place } from '../router.js'
import type { RegistrationToken } from '../types.js'
import { LoadState, Pager, Table } from '../list.js'
import { Time } from '../time.js'
import { Copy, Empty, ErrorNote, useLoad } from '../ui.js'

// Initial access tokens for dynamic client registration (RFC 7591): made with their limits (the token shown once),
// listed with how many uses are left, and revoked. Whether registration needs them is the account's `registration`
// setting; the clients they registered are on the clients page, marked "registered".

const GRANTS = ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code'] as const

export function RegistrationTokens(props: { place: Place }) {
  const cursor = props.place.query.get('cursor')
  const path = `/oauth/registration-tokens${query({ cursor, limit: 100 })}`
  const page = useLoad(path, () => api<Page<RegistrationToken>>('GET', path))
  const [made, setMade] = useState<RegistrationToken | undefined>()
  const [error, setError] = useState<unknown>()
  const [revoking, setRevoking] = useState<string | undefined>()
  const revoke = async (id: string) => {
    setError(undefined)
    setMade(undefined)
    try {
      await api('DELETE', `/oauth/registration-tokens/${encodeURIComponent(id)}`)
      setRevoking(undefined)
      page.reload()
    } catch (revokeError) {
      setError(revokeError)
    }
  }
  return (
    <section>
      <h1>Registration tokens</h1>
      <p class="muted">
        Initial access tokens let clients register themselves at <span class="mono">/oauth/register</span> while the <Link to="/settings">setting</Link>{' '}
        <span class="mono">registration</span> is <span class="mono">initial_access_token</span> or <span class="mono">open</span>.
      </p>
      <CreateToken
        onCreated={(token) => {
          setMade(token)
          page.reload()
        }}
      />
      {made?.token && (
        <p class="notice" role="status">
          Token {made.id} made. The token, shown only now: <code class="secret" data-secret>{made.token}</code> <Copy text={made.token} />
        </p>
      )}
      {error !== undefined && <ErrorNote error={error} />}
      <LoadState of={page} />
      {page.data && (
        <div class="stacked">
          <Table
            headings={['Token', 'Uses', 'Scope ceiling', 'Grant types', 'Expires', 'Actions']}
            rows={page.data.data}
            empty={<Empty title="No registration tokens." />}
            row={(token) => (
              <tr data-token={token.id}>
                <td class="mono">{token.id}</td>
                <td>
                  {token.uses} of {token.max_uses}
                </td>
                <td class="mono small wrap">{token.scope ?? <span class="muted">the policy's</span>}</td>
                <td class="mono small wrap">{token.grant_types?.join(', ') ?? <span class="muted">the policy's</span>}</td>
                <td>
                  <Time value={token.expires_at} />
                </td>
                <td>
                  {revoking === token.id ? (
                    <button type="button" class="destructive" onClick={() => void revoke(token.id)}>
                      Revoke for good
                    </button>
                  ) : (
                    <button type="button" class="secondary" onClick={() => setRevoking(token.id)} aria-label={`Revoke ${token.id}`}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            )}
          />
        </div>
      )}
      <Pager path="/registration-tokens" cursor={cursor} next={page.data?.next_cursor} />
    </section>
  )
}

function CreateToken(props: { onCreated(token: RegistrationToken): void }) {
  const [error, setError] = useState<unknown>()
  const submit = async (event: Event) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget as HTMLFormElement)
    const text = (name: string) => String(form.get(name) ?? '').trim()
    const body: Record<string, unknown> = { expires_in: Math.round(Number(text('expires_in_hours')) * 3600), max_uses: Number(text('max_uses')) }
    if (text('scope')) body.scope = text('scope')
    const grants = GRANTS.filter((grant) => form.get(grant) === 'on')
    if (grants.length > 0) body.grant_types = grants
    setError(undefined)
    try {
      props.onCreated(await api<RegistrationToken>('POST', '/oauth/registration-tokens', body))
    } catch (createError) {
      setError(createError)
    }
  }
  return (
    <form class="card" onSubmit={submit} aria-label="Make a registration token">
      <h2>Make a registration token</h2>
      <label for="token-hours">Usable for (hours)</label>
      <input id="token-hours" name="expires_in_hours" type="number" min={1} max={2160} step={1} defaultValue="24" required />
      <label for="token-uses">Registrations it allows</label>
      <input id="token-uses" name="max_uses" type="number" min={1} max={10000} step={1} defaultValue="1" required />
      <label for="token-scope">Scope ceiling (space-separated; empty: the registration policy's)</label>
      <input id="token-scope" name="scope" spellcheck={false} placeholder="openid profile" />
      <fieldset>
        <legend>Grant types (none checked: the registration policy's)</legend>
        {GRANTS.map((grant) => (
          <label class="check">
            <input type="checkbox" name={grant} /> <span class="mono wrap">{grant}</span>
          </label>
        ))}
      </fieldset>
      {error !== undefined && <ErrorNote error={error} />}
      <div class="actions">
        <button type="submit">Make token</button>
      </div>
    </form>
  )
}
