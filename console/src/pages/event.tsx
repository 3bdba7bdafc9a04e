import { api } from '../api.js'
import { Link } from '../router.js'
import { Time } from '../time.js'
import type { HeraldEvent } from '../types.js'
import { Copy, Empty, ErrorNote, isNotFound, useLoad } from '../ui.js'
import { LiveDeliveries } from './delivery-table.js'

// One event: its payload, and the deliveries it made, one per subscribed endpoint.

export function EventPage(props: { id: string }) {
  const path = `/webhooks/events/${encodeURIComponent(props.id)}`
  const event = useLoad(path, () => api<HeraldEvent>('GET', path))
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
      <LiveDeliveries
        title="Deliveries"
        filter={{ event_id: props.id }}
        limit={200}
        columns={['status', 'endpoint', 'delivery', 'attempts', 'outcome']}
        empty={<Empty title="No endpoint was subscribed to this type when the event was published, so it made no delivery." />}
      />
      {data && (
        <>
          <h2>Payload</h2>
          <pre class="payload">{JSON.stringify(data.data, null, 2)}</pre>
        </>
      )}
    </section>
  )
}
