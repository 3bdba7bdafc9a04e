import { useState } from 'preact/hooks'
import { ApiError, type Page, api, query } from '../api.js'
import type { Place } from '../router.js'
import { SCOPES, can } from '../session.js'
import type { Scope } from '../types.js'
import { LoadState, Pager, Table } from '../list.js'
import { Empty, ErrorNote, useLoad } from '../ui.js'

// The account's OAuth scopes: OpenID Connect's own (in every account, never deleted) and the custom ones clients may
// be allowed; a scope some client still allows can't be deleted, and the API's 409 says which.

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
      <LoadState of={page} />
      {page.data && (
        <div class="stacked">
          <Table
            headings={['Scope', 'Kind', 'Description', writable && 'Actions']}
            rows={page.data.data}
            empty={<Empty title="No scopes." />}
            row={(scope) => (
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
            )}
          />
        </div>
      )}
      <Pager path="/scopes" cursor={cursor} next={page.data?.next_cursor} />
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
