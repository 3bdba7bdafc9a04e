import { useState } from 'preact/hooks'
import { type Page, api, query } from '../api.js'
import { Link, type Place, navigate } from '../router.js'
import { SCOPES, can } from '../session.js'
import type { Endpoint, Subscription } from '../types.js'
import { LoadState, Pager, Table } from '../list.js'
import { Empty, ErrorNote, Status, Time, useLoad } from '../ui.js'
import { successRate, totals, useEndpointStats } from './endpoint-stats.js'

export function Endpoints(props: { place: Place }) {
  const cursor = props.place.query.get('cursor')
  const path = `/webhooks/endpoints${query({ cursor, limit: 100 })}`
  const page = useLoad(path, () => api<Page<Endpoint>>('GET', path))
  const writable = can(SCOPES.webhooksWrite)
  const [creating, setCreating] = useState(false)
  return (
    <section>
      <div class="heading">
        <h1>Endpoints</h1>
        {writable && !creating && (
          <button type="button" onClick={() => setCreating(true)}>
            Add endpoint
          </button>
        )}
      </div>
      {creating && <CreateEndpoint onCancel={() => setCreating(false)} />}
      <LoadState of={page} />
      {page.data && (
        <Table
          headings={['Status', 'Endpoint', 'URL', 'Description', { number: 'Success, 24 h' }, 'Created']}
          rows={page.data.data}
          empty={
            <Empty title="No endpoints yet.">
              <p>{writable ? 'Add an endpoint: the URL Herald sends your events to, and the event types it wants.' : "This token can't add endpoints: a client with herald:webhooks:write can."}</p>
            </Empty>
          }
          row={(endpoint) => (
            <tr data-endpoint={endpoint.id}>
              <td>
                <Status value={endpoint.status} />
                {endpoint.disabled_reason && <span class="muted small"> ({endpoint.disabled_reason})</span>}
              </td>
              <td>
                <Link to={`/endpoints/${endpoint.id}`} class="mono">
                  {endpoint.id}
                </Link>
              </td>
              <td class="mono wrap">{endpoint.url}</td>
              <td>{endpoint.description || <span class="muted">—</span>}</td>
              <td class="number">
                <SuccessRate endpointId={endpoint.id} />
              </td>
              <td>
                <Time value={endpoint.created_at} />
              </td>
            </tr>
          )}
        />
      )}
      <Pager path="/endpoints" cursor={cursor} next={page.data?.next_cursor} />
    </section>
  )
}

/** The share of the endpoint's attempts of the last 24 hours answered 2xx, with the counts on hover. */
function SuccessRate(props: { endpointId: string }) {
  const stats = useEndpointStats(props.endpointId)
  if (stats.error !== undefined) return <span class="muted">?</span>
  if (!stats.data) return <span class="muted">…</span>
  const counts = totals(stats.data.data)
  const rate = successRate(counts)
  if (rate === undefined) return <span class="muted" title="No attempts in the last 24 hours">no attempts</span>
  return <span title={`${counts.succeeded} of ${counts.attempts} attempts answered 2xx`}>{rate}</span>
}

/** Event types typed as a list separated by commas, spaces or lines. */
export function parseEventTypes(text: string): string[] {
  return text.split(/[\s,]+/).filter(Boolean)
}

/** The endpoint and its subscription, in one form; two API calls, the second named if it fails. */
function CreateEndpoint(props: { onCancel(): void }) {
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget as HTMLFormElement)
    const text = (name: string) => String(form.get(name) ?? '').trim()
    const eventTypes = parseEventTypes(text('event_types'))
    setBusy(true)
    setError(undefined)
    try {
      const limits = { ...(text('rate_limit') && { rate_limit: Number(text('rate_limit')) }), ...(text('max_in_flight') && { max_in_flight: Number(text('max_in_flight')) }) }
      const endpoint = await api<Endpoint>('POST', '/webhooks/endpoints', { url: text('url'), description: text('description'), ...limits })
      try {
        if (eventTypes.length > 0) await api<Subscription>('POST', '/webhooks/subscriptions', { endpoint_id: endpoint.id, event_types: eventTypes })
      } catch (subscriptionError) {
        setError(new Error(`The endpoint ${endpoint.id} was added, but its subscription was refused: ${subscriptionError instanceof Error ? subscriptionError.message : String(subscriptionError)}`))
        return
      }
      navigate(`/endpoints/${endpoint.id}`)
    } catch (createError) {
      setError(createError)
    } finally {
      setBusy(false)
    }
  }
  return (
    <form class="card" onSubmit={submit} aria-label="Add an endpoint">
      <h2>Add an endpoint</h2>
      <label for="endpoint-url">URL</label>
      <input id="endpoint-url" name="url" type="url" required placeholder="https://example.com/webhooks" spellcheck={false} />
      <label for="endpoint-description">Description</label>
      <input id="endpoint-description" name="description" maxLength={1024} />
      <label for="endpoint-rate">Rate limit (deliveries per second; empty for none)</label>
      <input id="endpoint-rate" name="rate_limit" type="number" min={1} max={10_000} />
      <label for="endpoint-in-flight">Attempts in flight at once</label>
      <input id="endpoint-in-flight" name="max_in_flight" type="number" min={1} max={1000} placeholder="20" />
      <label for="endpoint-types">Event types</label>
      <textarea id="endpoint-types" name="event_types" rows={2} placeholder="invoice.paid, invoice.*, or * for every event" spellcheck={false} />
      <p class="muted small">Exact types, prefix patterns such as invoice.*, or * for everything; separated by commas or spaces. Leave empty to subscribe later.</p>
      {error !== undefined && <ErrorNote error={error} />}
      <div class="actions">
        <button type="submit" disabled={busy}>
          {busy ? 'Adding…' : 'Add endpoint'}
        </button>
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  )
}
