import { useState } from 'preact/hooks'
import { ApiError, type Page, api, query } from '../api.js'
import { Link, type Place } from '../router.js'
import { SCOPES, can } from '../session.js'
import { Empty, ErrorNote, useLoad } from '../ui.js'

// The account's OAuth scopes: OpenID Connect's own (in every account, never deleted) and the custom ones clients may
// be allowed; a scope some client still allows can't be deleted, and the API's 409 says which.

interface Scope {
  name: string
  description: string
  kind: 'oidc' | 'custom'
}

export function Scopes(props: { place: Place }) {
  const cursor = props.place.query.get('cursor')
  const path = `/oauth/scopes${query({ cursor, limit: 200 })}`
  const page = useLoad(path, () => api<Page<Scope>>('GET', path))
  const writable = can(SCOPES.scopesWrite)
  const [said, setSaid] = useState<{ ok: boolean; text: string } | undefined>()
  const remove = async (name: string) => {
    setSaid(undefined)
    try {
      await api('DELETE', `/oauth/scopes/${encodeURIComponent(name)}`)
      setSaid({ ok: true, text: `Scope ${name} deleted.` })
      page.reload()
    } catch (error) {
      setSaid({ ok: false, text: error instanceof ApiError && error.status === 409 ? `Can't delete ${name}: ${error.message}` : error instanceof Error ? error.message : String(error) })
    }
  }
  return (
    <section>
      <h1>Scopes</h1>
      {writable && <CreateScope onCreated={(name) => (setSaid({ ok: true, text: `Scope ${name} added.` }), page.reload())} />}
      {said && (
        <p class={said.ok ? 'ok' : 'error'} role={said.ok ? 'status' : 'alert'}>
          {said.text}
        </p>
      )}
      {page.error !== undefined && <ErrorNote error={page.error} />}
      {page.loading && !page.data && <p class="muted">Loading…</p>}
      {page.data?.data.length === 0 && <Empty title="No scopes." />}
      {page.data && page.data.data.length > 0 && (
        <table class="list">
          <thead>
            <tr>
              <th scope="col">Scope</th>
              <th scope="col">Kind</th>
              <th scope="col">Description</th>
              {writable && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {page.data.data.map((scope) => (
              <tr data-scope={scope.name}>
                <td class="mono">{scope.name}</td>
                <td>{scope.kind === 'oidc' ? 'OpenID Connect' : 'custom'}</td>
                <td>{scope.description || <span class="muted">—</span>}</td>
                {writable && (
                  <td>
                    {scope.kind === 'custom' && (
                      <button type="button" class="secondary" onClick={() => void remove(scope.name)} aria-label={`Delete ${scope.name}`}>
                        Delete
                      </button>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav class="pager" aria-label="Pages">
        {cursor && <Link to="/scopes">First page</Link>}
        {page.data?.next_cursor && <Link to={`/scopes${query({ cursor: page.data.next_cursor })}`}>Next page</Link>}
      </nav>
    </section>
  )
}

function CreateScope(props: { onCreated(name: string): void }) {
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const [error, setError] = useState<unknown>()
  const submit = async (event: Event) => {
    event.preventDefault()
    setError(undefined)
    try {
      const created = await api<Scope>('POST', '/oauth/scopes', { name: name.trim(), description: description.trim() })
      setName('')
      setDescription('')
      props.onCreated(created.name)
    } catch (createError) {
      setError(createError)
    }
  }
  return (
    <form class="filters" onSubmit={submit} aria-label="Add a scope">
      <label>
        Scope name
        <input value={name} onInput={(event) => setName(event.currentTarget.value)} required placeholder="invoices:read" spellcheck={false} />
      </label>
      <label>
        Scope description
        <input value={description} onInput={(event) => setDescription(event.currentTarget.value)} maxLength={1000} />
      </label>
      <div class="filter-actions">
        <button type="submit">Add scope</button>
      </div>
      {error !== undefined && <ErrorNote error={error} />}
    </form>
  )
}
