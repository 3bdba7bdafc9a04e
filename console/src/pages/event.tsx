import { type Page, api, query } from '../api.js'
import { Link } from '../router.js'
import type { Delivery, EventType, HeraldEvent } from '../types.js'
import { LoadState } from '../list.js'
import { Copy, Empty, ErrorNote, Time, isNotFound, useLoad } from '../ui.js'
import { DeliveryTable } from './delivery-table.js'

// One event (its payload, and the deliveries it made, one per subscribed endpoint), and the catalog of event types.

export function EventPage(props: { id: string }) {
  const path = `/webhooks/events/${encodeURIComponent(props.id)}`
  const event = useLoad(path, () => api<HeraldEvent>('GET', path))
  const deliveriesPath = `/webhooks/deliveries${query({ event_id: props.id, limit: 200 })}`
  const deliveries = useLoad(deliveriesPath, () => api<Page<Delivery>>('GET', deliveriesPath))
  if (isNotFound(event.error)) {
    return (
      <section>
        <h1>Event not found</h1>
        <Empty title={`There is no event ${props.id} in this account (or it is past its retention).`}>
          <Link to="/events">Back to the events</Link>
        </Empty>
      </section>
    )
  }
  const data = event.data
  return (
    <section>
      <p class="crumbs">
        <Link to="/events">Events</Link> /
      </p>
      <h1>
        Event <span class="mono">{props.id}</span> <Copy text={props.id} />
      </h1>
      {event.error !== undefined && <ErrorNote error={event.error} />}
      {data && (
        <dl class="facts">
          <dt>Type</dt>
          <dd class="mono">{data.type}</dd>
          <dt>Created</dt>
          <dd>
            <Time value={data.created_at} />
          </dd>
        </dl>
      )}
      <h2>Deliveries</h2>
      {deliveries.error !== undefined && <ErrorNote error={deliveries.error} />}
      {deliveries.data && (
        <DeliveryTable
          deliveries={deliveries.data.data}
          columns={['status', 'endpoint', 'delivery', 'attempts']}
          empty={<Empty title="No endpoint was subscribed to this type when the event was published, so it made no delivery." />}
        />
      )}
      {deliveries.data?.next_cursor && (
        <p>
          <Link to={`/${query({ event_id: props.id })}`}>All its deliveries</Link>
        </p>
      )}
      {data && (
        <>
          <h2>Payload</h2>
          <pre class="payload">{JSON.stringify(data.data, null, 2)}</pre>
        </>
      )}
    </section>
  )
}

export function EventTypes() {
  const types = useLoad('event-types', () => api<{ data: EventType[] }>('GET', '/webhooks/event-types'))
  return (
    <section>
      <p class="crumbs">
        <Link to="/events">Events</Link> /
      </p>
      <h1>Event types</h1>
      <p class="muted">Herald's own types, and the custom types your account has published. Subscribe an endpoint to a type, a prefix such as invoice.*, or *.</p>
      <LoadState of={types} />
      {types.data?.data.map((type) => (
        <article class="card wide" data-event-type={type.name}>
          <h2 class="mono">
            {type.name} {type.custom && <span class="badge">custom</span>}
          </h2>
          <p>{type.description}</p>
          <p>
            <Link to={`/events${query({ type: type.name })}`}>Its events</Link>
          </p>
          <details>
            <summary>Example data</summary>
            <pre>{JSON.stringify(type.example, null, 2)}</pre>
          </details>
        </article>
      ))}
    </section>
  )
}
