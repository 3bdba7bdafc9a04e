import { useState } from 'preact/hooks'
import { ApiError, type Page, api, query } from '../api.js'
import { Link, type Place, navigate } from '../router.js'
import { SCOPES, can } from '../session.js'
import type { HeraldEvent } from '../types.js'
import { LiveToggle, LoadState, Pager, Table, useLive } from '../list.js'
import { Empty, Time, useLoad } from '../ui.js'

// The account's events, newest first, with the type filter and the cursor in the URL; and a form to publish one.

export function Events(props: { place: Place }) {
  const type = props.place.query.get('type') ?? ''
  const cursor = props.place.query.get('cursor')
  const path = `/webhooks/events${query({ type, cursor, limit: 50 })}`
  const page = useLoad(path, () => api<Page<HeraldEvent>>('GET', path))
  const live = useLive(page)
  const [publishing, setPublishing] = useState(false)
  return (
    <section>
      <div class="heading">
        <h1>Events</h1>
        <div class="actions">
          <LiveToggle live={live} />
          <Link to="/event-types">Event types</Link>
          {can(SCOPES.publish) && !publishing && (
            <button type="button" onClick={() => setPublishing(true)}>
              Publish an event
            </button>
          )}
        </div>
      </div>
      {publishing && <Publish type={type} onCancel={() => setPublishing(false)} />}
      <TypeFilter key={type} type={type} />
      <LoadState of={page} />
      {page.data && (
        <Table
          headings={['Event', 'Type', 'Created']}
          rows={page.data.data}
          empty={
            <Empty title={type ? `No events of type ${type}.` : 'No events yet.'}>
              <p>{type ? <Link to="/events">Show every event</Link> : 'Events appear here as your application publishes them (POST /webhooks/events), or as Herald does (oauth.*).'}</p>
            </Empty>
          }
          row={(event) => (
            <tr data-event={event.id}>
              <td>
                <Link to={`/events/${event.id}`} class="mono">
                  {event.id}
                </Link>
              </td>
              <td>
                <Link to={`/events${query({ type: event.type })}`} class="mono">
                  {event.type}
                </Link>
              </td>
              <td>
                <Time value={event.created_at} />
              </td>
            </tr>
          )}
        />
      )}
      <Pager path="/events" params={{ type }} cursor={cursor} next={page.data?.next_cursor} first="Newest" later="Older events" />
    </section>
  )
}

function TypeFilter(props: { type: string }) {
  const [type, setType] = useState(props.type)
  const apply = (event: Event) => {
    event.preventDefault()
    navigate(`/events${query({ type: type.trim() })}`)
  }
  return (
    <form class="filters" onSubmit={apply} aria-label="Filter events">
      <label>
        Type
        <input name="type" value={type} onInput={(event) => setType(event.currentTarget.value)} placeholder="invoice.paid" spellcheck={false} />
      </label>
      <div class="filter-actions">
        <button type="submit">Apply filter</button>
        {props.type && <Link to="/events">Clear</Link>}
      </div>
    </form>
  )
}

/** The data as typed, as a JSON object, or what is wrong with it in words. */
export function parseData(text: string): { data: Record<string, unknown> } | { error: string } {
  let parsed: unknown
  try {
    parsed = JSON.parse(text.trim() === '' ? '{}' : text)
  } catch (error) {
    return { error: `The data is not valid JSON: ${error instanceof Error ? error.message : String(error)}` }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { error: 'The data must be a JSON object, such as {"id": 42}.' }
  return { data: parsed as Record<string, unknown> }
}

/** Publishes an event of any type the API accepts; its refusals (400, 413, a reserved type) are shown in its words. */
function Publish(props: { type: string; onCancel(): void }) {
  const [error, setError] = useState<string | undefined>()
  // Held in state: a controlled input given only a prop would return to it on every render (an error shown, say).
  const [type, setType] = useState(props.type)
  const submit = async (event: Event) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget as HTMLFormElement)
    const parsed = parseData(String(form.get('data') ?? ''))
    if ('error' in parsed) return setError(parsed.error)
    setError(undefined)
    try {
      const key = String(form.get('idempotency_key') ?? '').trim()
      // A key Herald has seen within 24 hours answers with the event first published under it: that is the page opened.
      const published = await api<HeraldEvent>('POST', '/webhooks/events', { type: type.trim(), data: parsed.data, ...(key && { idempotency_key: key }) })
      navigate(`/events/${published.id}`)
    } catch (publishError) {
      setError(publishError instanceof ApiError ? `Herald refused the event (${publishError.status}): ${publishError.message}` : String(publishError))
    }
  }
  return (
    <form class="card" onSubmit={submit} aria-label="Publish an event">
      <h2>Publish an event</h2>
      <p class="muted small">Every endpoint subscribed to its type gets a delivery.</p>
      <label for="publish-type">Type</label>
      <input id="publish-type" name="type" required value={type} onInput={(event) => setType(event.currentTarget.value)} placeholder="invoice.paid" spellcheck={false} />
      <label for="publish-data">Data (a JSON object)</label>
      <textarea id="publish-data" name="data" rows={6} spellcheck={false} placeholder='{"invoice_id": "in_123"}' />
      <label for="publish-key">Idempotency key (optional)</label>
      <input id="publish-key" name="idempotency_key" maxLength={255} spellcheck={false} autoComplete="off" placeholder="invoice-in_123-paid" aria-describedby="publish-key-note" />
      <p id="publish-key-note" class="muted small">
        Publishing again with the same key within 24 hours publishes nothing more and opens the event first published; the same key with another type or data is refused.
      </p>
      {error !== undefined && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="actions">
        <button type="submit">Publish</button>
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  )
}
