import { useState } from 'preact/hooks'
import { type Page, api, query } from '../api.js'
import { Link, type Place } from '../router.js'
import { SCOPES, can } from '../session.js'
import type { Client } from '../types.js'
import { LoadState, Pager, Table } from '../list.js'
import { Copy, Empty, ErrorNote, useLoad } from '../ui.js'

// The account's OAuth clients: the list, registration with the main RFC 7591 fields, and per client a secret
// rotation (the new secret shown once) and deletion; each client's page edits it. The account's original management
// client is offered neither: the API refuses its deletion, and a new secret would silently break the credentials
// its users saved (the operator resets it with `herald accounts reset-admin`).

const GRANTS = ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:token-exchange'] as const
const AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt'] as const
/** Clients that didn't come from this API say where they came from. */
const SOURCE_BADGES: Record<Client['source'], string | undefined> = { management: undefined, registration: 'registered', metadata_document: 'metadata document' }

/** A secret the API shows only now: copyable, with the warning that it won't be shown again. */
function SecretOnce(props: { client: Client; what: string }) {
  if (!props.client.client_secret) return null
  return (
    <p class="notice" role="status">
      {props.what} Its secret, shown only now: <code class="secret" data-secret>{props.client.client_secret}</code> <Copy text={props.client.client_secret} />
    </p>
  )
}

export function Clients(props: { place: Place }) {
  const cursor = props.place.query.get('cursor')
  const path = `/oauth/clients${query({ cursor, limit: 100 })}`
  const page = useLoad(path, () => api<Page<Client>>('GET', path))
  const writable = can(SCOPES.clientsWrite)
  const [creating, setCreating] = useState(false)
  const [shown, setShown] = useState<{ client: Client; what: string } | undefined>()
  const [error, setError] = useState<unknown>()
  const [deleting, setDeleting] = useState<string | undefined>()
  const act = async (run: () => Promise<void>) => {
    setError(undefined)
    setShown(undefined)
    try {
      await run()
    } catch (actionError) {
      setError(actionError)
    }
  }
  const rotate = (id: string) => act(async () => setShown({ client: await api<Client>('POST', `/oauth/clients/${encodeURIComponent(id)}/secret`), what: `Client ${id} has a new secret; the old one no longer works.` }))
  const remove = (id: string) =>
    act(async () => {
      await api('DELETE', `/oauth/clients/${encodeURIComponent(id)}`)
      setDeleting(undefined)
      page.reload()
    })
  return (
    <section>
      <div class="heading">
        <h1>Clients</h1>
        {writable && !creating && (
          <div class="actions">
            <Link to="/registration-tokens">Registration tokens</Link>
            <button type="button" onClick={() => setCreating(true)}>
              Register a client
            </button>
          </div>
        )}
      </div>
      {creating && (
        <CreateClient
          onCancel={() => setCreating(false)}
          onCreated={(client) => {
            setCreating(false)
            setShown({ client, what: `Client ${client.client_id} registered.` })
            page.reload()
          }}
        />
      )}
      {shown && <SecretOnce client={shown.client} what={shown.what} />}
      {error !== undefined && <ErrorNote error={error} />}
      <LoadState of={page} />
      {page.data && (
        <div class="stacked">
          <Table
            headings={['Client', 'Name', 'Grants', 'Scope', writable && 'Actions']}
            rows={page.data.data}
            empty={<Empty title="No clients." />}
            row={(client) => (
              <tr data-client={client.client_id}>
                <td>
                  <Link to={`/clients/${encodeURIComponent(client.client_id)}`} class="mono">
                    {client.client_id}
                  </Link>{' '}
                  <Copy text={client.client_id} />
                </td>
                <td>
                  {client.client_name || <span class="muted">—</span>} {client.admin && <span class="badge">admin</span>}{' '}
                  {SOURCE_BADGES[client.source] && <span class="badge">{SOURCE_BADGES[client.source]}</span>}
                </td>
                <td class="mono small">{client.grant_types.join(', ')}</td>
                <td class="mono small wrap">{client.scope || <span class="muted">—</span>}</td>
                {writable && (
                  <td>
                    {client.admin ? (
                      <span class="muted small">none for the account's admin client</span>
                    ) : (
                      <div class="actions">
                        {client.token_endpoint_auth_method !== 'none' && client.token_endpoint_auth_method !== 'private_key_jwt' && (
                          <button type="button" class="secondary" onClick={() => void rotate(client.client_id)} aria-label={`Rotate secret of ${client.client_id}`}>
                            Rotate secret
                          </button>
                        )}
                        {deleting === client.client_id ? (
                          <button type="button" class="destructive" onClick={() => void remove(client.client_id)}>
                            Delete for good
                          </button>
                        ) : (
                          <button type="button" class="secondary" onClick={() => setDeleting(client.client_id)} aria-label={`Delete ${client.client_id}`}>
                            Delete
                          </button>
                        )}
                      </div>
                    )}
                  </td>
                )}
              </tr>
            )}
          />
        </div>
      )}
      <Pager path="/clients" cursor={cursor} next={page.data?.next_cursor} />
    </section>
  )
}

function CreateClient(props: { onCancel(): void; onCreated(client: Client): void }) {
  const [error, setError] = useState<unknown>()
  const submit = async (event: Event) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget as HTMLFormElement)
    const text = (name: string) => String(form.get(name) ?? '').trim()
    const grants = GRANTS.filter((grant) => form.get(grant) === 'on')
    const metadata: Record<string, unknown> = { client_name: text('client_name'), grant_types: grants, token_endpoint_auth_method: text('auth_method') }
    const redirects = text('redirect_uris').split(/\s+/).filter(Boolean)
    if (redirects.length > 0) metadata.redirect_uris = redirects
    if (grants.includes('authorization_code')) metadata.response_types = ['code']
    if (text('scope')) metadata.scope = text('scope')
    if (form.get('token_exchange_impersonation') === 'on') metadata.token_exchange_impersonation = true
    setError(undefined)
    try {
      props.onCreated(await api<Client>('POST', '/oauth/clients', metadata))
    } catch (createError) {
      setError(createError)
    }
  }
  return (
    <form class="card" onSubmit={submit} aria-label="Register a client">
      <h2>Register a client</h2>
      <label for="client-name">Name</label>
      <input id="client-name" name="client_name" maxLength={200} />
      <fieldset>
        <legend>Grant types</legend>
        {GRANTS.map((grant) => (
          <label class="check">
            <input type="checkbox" name={grant} defaultChecked={grant === 'authorization_code'} /> <span class="mono wrap">{grant}</span>
          </label>
        ))}
        <label class="check">
          <input type="checkbox" name="token_exchange_impersonation" /> <span>Token exchange impersonates the subject (its tokens carry no <span class="mono">act</span> claim)</span>
        </label>
      </fieldset>
      <label for="client-redirects">Redirect URIs (one per line; for authorization_code)</label>
      <textarea id="client-redirects" name="redirect_uris" rows={2} spellcheck={false} placeholder="https://app.example/callback" />
      <label for="client-auth">Token endpoint authentication</label>
      <select id="client-auth" name="auth_method">
        {AUTH_METHODS.map((method) => (
          <option value={method}>{method}</option>
        ))}
      </select>
      <label for="client-scope">Scope (space-separated)</label>
      <input id="client-scope" name="scope" spellcheck={false} placeholder="openid profile" />
      {error !== undefined && <ErrorNote error={error} />}
      <div class="actions">
        <button type="submit">Register</button>
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  )
}
