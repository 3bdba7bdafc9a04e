import { useState } from 'preact/hooks'
import { type Page, api, query } from '../api.js'
import { Link, type Place, navigate } from '../router.js'
import { SCOPES, can } from '../session.js'
import { DELIVERY_STATUSES, type Delivery } from '../types.js'
import { LiveRefresh, LoadState, Pager } from '../list.js'
import { useEndpointChoices } from '../names.js'
import { Empty, useLoad } from '../ui.js'
import { DeliveryTable } from './delivery-table.js'

/** The API's filters of `GET /webhooks/deliveries`, kept as the page's own query parameters. */
const FILTERS = ['status', 'endpoint_id', 'event_type', 'event_id', 'since', 'until'] as const
const PAGE_SIZE = 50

/** A datetime-local value (the browser's zone) as RFC 3339 UTC, and back. */
export function toUtc(local: string): string {
  return local ? new Date(local).toISOString() : ''
}
export function toLocalInput(utc: string | null): string {
  if (!utc) return ''
  const date = new Date(utc)
  if (Number.isNaN(date.getTime())) return ''
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16)
}

export function Deliveries(props: { place: Place }) {
  const params = props.place.query
  const filters = Object.fromEntries(FILTERS.map((name) => [name, params.get(name) ?? ''])) as Filters
  const cursor = params.get('cursor')
  // A page size in the URL (the API's limit) is kept across pages, as the filters are.
  const limit = params.get('limit')
  const path = `/webhooks/deliveries${query({ ...filters, cursor, limit: limit ?? PAGE_SIZE })}`
  const page = useLoad(path, () => api<Page<Delivery>>('GET', path))
  const filtered = FILTERS.some((name) => filters[name])

  return (
    <section>
      <div class="heading">
        <h1>Deliveries</h1>
        <LiveRefresh of={page} />
      </div>
      {/* key: a new URL (back, a bookmark) starts the form again from its filters. */}
      <FilterForm key={params.toString()} filters={filters} filtered={filtered} />
      <LoadState of={page} />
      {page.data && (
        <DeliveryTable
          deliveries={page.data.data}
          columns={['status', 'delivery', 'eventType', 'endpoint', 'attempts', 'outcome', 'created', 'nextAttempt']}
          empty={
            filtered || cursor ? (
              <Empty title="No deliveries match these filters.">
                <Link to="/">Show every delivery</Link>
              </Empty>
            ) : (
              <Empty title="No deliveries yet.">
                <p>
                  A delivery is made for each endpoint subscribed to an event when the event is published.{' '}
                  {can(SCOPES.webhooksWrite) ? (
                    <>
                      <Link to="/endpoints">Add an endpoint</Link>, then send it a test event.
                    </>
                  ) : (
                    'A client with herald:webhooks:write can add endpoints.'
                  )}
                </p>
              </Empty>
            )
          }
        />
      )}
      <Pager path="/" params={{ ...filters, limit }} cursor={cursor} next={page.data?.next_cursor} first="Newest" later="Older deliveries" />
    </section>
  )
}

type Filters = Record<(typeof FILTERS)[number], string>

function FilterForm(props: { filters: Filters; filtered: boolean }) {
  const endpoints = useEndpointChoices()
  const [values, setValues] = useState<Filters>({ ...props.filters, since: toLocalInput(props.filters.since), until: toLocalInput(props.filters.until) })
  const field = (name: keyof Filters) => ({
    name,
    value: values[name],
    onInput: (event: Event) => setValues({ ...values, [name]: (event.currentTarget as HTMLInputElement | HTMLSelectElement).value }),
  })
  const apply = (event: Event) => {
    event.preventDefault()
    const trimmed = Object.fromEntries(FILTERS.map((name) => [name, values[name].trim()]))
    navigate(`/${query({ ...trimmed, since: toUtc(values.since), until: toUtc(values.until) })}`)
  }
  return (
    <form class="filters" onSubmit={apply} aria-label="Filter deliveries">
      <label>
        Status
        <select {...field('status')}>
          <option value="">any</option>
          {DELIVERY_STATUSES.map((status) => (
            <option value={status}>{status}</option>
          ))}
        </select>
      </label>
      <label>
        Endpoint
        <input {...field('endpoint_id')} placeholder="ep_…" spellcheck={false} list="endpoint-choices" />
      </label>
      {/* Offered by name as the id is typed; the filter is the id. */}
      <datalist id="endpoint-choices">
        {endpoints.map(([id, name]) => (
          <option value={id}>{name}</option>
        ))}
      </datalist>
      <label>
        Event type
        <input {...field('event_type')} placeholder="invoice.paid" spellcheck={false} />
      </label>
      <label>
        Event id
        <input {...field('event_id')} placeholder="evt_…" spellcheck={false} />
      </label>
      <label>
        Created from
        <input {...field('since')} type="datetime-local" />
      </label>
      <label>
        Created before
        <input {...field('until')} type="datetime-local" />
      </label>
      <div class="filter-actions">
        <button type="submit">Apply filters</button>
        {props.filtered && <Link to="/">Clear</Link>}
      </div>
    </form>
  )
}
