import { useState } from 'preact/hooks'
import { api } from '../api.js'
import { Link } from '../router.js'
import { SCOPES, can } from '../session.js'
import type { Client } from '../types.js'
import { Copy, Empty, ErrorNote, OkNote, isNotFound, useLoad } from '../ui.js'

// One client: its metadata, and (with herald:clients:write) an edit of the fields a person changes most. The
// account's original management client says why it has no Delete nor Rotate secret, and its scope stays as it is;
// a client from a metadata document is read-only (the API answers 409 to a change).

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange'

type Fields = Record<'client_name' | 'redirect_uris' | 'scope' | 'backchannel_logout_uri', string>

function fieldsOf(client: Client): Fields {
  return {
    client_name: client.client_name,
    redirect_uris: client.redirect_uris.join('\n'),
    scope: client.scope,
    backchannel_logout_uri: client.backchannel_logout_uri ?? '',
  }
}

export function ClientPage(props: { id: string }) {
  const path = `/oauth/clients/${encodeURIComponent(props.id)}`
  const client = useLoad(path, () => api<Client>('GET', path))
  if (isNotFound(client.error)) {
    return (
      <section>
        <h1>Client not found</h1>
        <Empty title={`There is no client ${props.id} in this account.`}>
          <Link to="/clients">Back to the clients</Link>
        </Empty>
      </section>
    )
  }
  return (
    <section>
      <p class="crumbs">
        <Link to="/clients">Clients</Link> /
      </p>
      <h1>
        Client <span class="mono">{props.id}</span> <Copy text={props.id} />
      </h1>
      {client.error !== undefined && <ErrorNote error={client.error} />}
      {client.data?.admin && (
        <p class="notice" data-admin-client>
          This is the account's original management client, the one <code>herald accounts create</code> printed: the way back into the account. The API refuses to
          delete it or change its scope, and a new secret would break the credentials its users saved, so the console offers neither; if its secret is lost, the
          operator resets it with <code>herald accounts reset-admin</code>.
        </p>
      )}
      {client.data?.source === 'metadata_document' && (
        <p class="notice" data-document-client>
          This client describes itself in the document at its id, which Herald fetches again when its caching headers say so: change the document, not the
          client. Its name and logo are its own claims; the account's consent app shows them as such.
        </p>
      )}
      {client.data &&
        (can(SCOPES.clientsWrite) && client.data.source !== 'metadata_document' ? (
          <EditClient client={client.data} path={path} />
        ) : (
          <pre>{JSON.stringify(client.data, null, 2)}</pre>
        ))}
    </section>
  )
}

/** The form keeps what was saved: the API answers the client as changed, and the form already shows it. */
function EditClient(props: { client: Client; path: string }) {
  const [values, setValues] = useState(() => fieldsOf(props.client))
  const [impersonates, setImpersonates] = useState(props.client.token_exchange_impersonation)
  const exchanges = props.client.grant_types.includes(TOKEN_EXCHANGE)
  const [error, setError] = useState<unknown>()
  const [saved, setSaved] = useState(false)
  const field = (name: keyof Fields) => ({
    name,
    value: values[name],
    onInput: (event: Event) => setValues({ ...values, [name]: (event.currentTarget as HTMLInputElement).value }),
  })
  const submit = async (event: Event) => {
    event.preventDefault()
    setError(undefined)
    setSaved(false)
    const redirects = values.redirect_uris.split(/\s+/).filter(Boolean)
    try {
      await api<Client>('PATCH', props.path, {
        client_name: values.client_name.trim(),
        ...(redirects.length > 0 ? { redirect_uris: redirects } : {}),
        scope: values.scope.trim(),
        // Empty: the client no longer takes back-channel logout, and its logout endpoint goes with it.
        backchannel_logout_uri: values.backchannel_logout_uri.trim() || null,
        ...(exchanges && { token_exchange_impersonation: impersonates }),
      })
      setSaved(true)
    } catch (saveError) {
      setError(saveError)
    }
  }
  return (
    <form class="card" onSubmit={submit} aria-label="Edit the client">
      <p class="muted small">
        Grants: <span class="mono">{props.client.grant_types.join(', ')}</span> · authentication: <span class="mono">{props.client.token_endpoint_auth_method}</span>
      </p>
      <label for="edit-client-name">Name</label>
      <input id="edit-client-name" maxLength={200} {...field('client_name')} />
      <label for="edit-client-redirects">Redirect URIs (one per line)</label>
      <textarea id="edit-client-redirects" rows={3} spellcheck={false} {...field('redirect_uris')} />
      <label for="edit-client-scope">Scope (space-separated)</label>
      <input id="edit-client-scope" spellcheck={false} readOnly={props.client.admin} {...field('scope')} />
      <label for="edit-client-logout">Back-channel logout URI (empty for none)</label>
      <input id="edit-client-logout" type="url" spellcheck={false} {...field('backchannel_logout_uri')} />
      {exchanges && (
        <label class="check">
          <input type="checkbox" checked={impersonates} onChange={(event) => setImpersonates(event.currentTarget.checked)} />{' '}
          <span>
            Token exchange impersonates the subject (its tokens carry no <span class="mono">act</span> claim)
          </span>
        </label>
      )}
      {error !== undefined && <ErrorNote error={error} />}
      <OkNote text={saved ? 'Saved.' : undefined} />
      <div class="actions">
        <button type="submit">Save</button>
      </div>
    </form>
  )
}
