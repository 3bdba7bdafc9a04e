import type { ComponentChildren, VNode } from 'preact'
import { type Page, api, query } from '../api.js'
import { type Heading, LiveToggle, Table, useLive } from '../list.js'
import { EndpointName } from '../names.js'
import { Link } from '../router.js'
import { Time } from '../time.js'
import type { Delivery } from '../types.js'
import { ErrorNote, Status, useLoad } from '../ui.js'

// Deliveries as rows, for the deliveries page, an event's and an endpoint's: each picks the columns it shows, in its order.

function outcome(delivery: Delivery): string {
  if (delivery.last_response_status !== null) return `HTTP ${delivery.last_response_status}`
  return delivery.last_error ?? '—'
}

const COLUMNS = {
  status: {
    heading: 'Status',
    cell: (delivery) => (
      <td>
        <Status value={delivery.status} />
      </td>
    ),
  },
  delivery: {
    heading: 'Delivery',
    cell: (delivery) => (
      <td>
        <Link to={`/deliveries/${delivery.id}`} class="mono">
          {delivery.id}
        </Link>
      </td>
    ),
  },
  eventType: { heading: 'Event type', cell: (delivery) => <td class="mono">{delivery.event_type}</td> },
  endpoint: {
    heading: 'Endpoint',
    cell: (delivery) => (
      <td>
        <EndpointName id={delivery.endpoint_id} />
      </td>
    ),
  },
  attempts: { heading: { number: 'Attempts' }, cell: (delivery) => <td class="number">{delivery.attempt_count}</td> },
  outcome: { heading: 'Last outcome', cell: (delivery) => <td>{outcome(delivery)}</td> },
  created: {
    heading: 'Created',
    cell: (delivery) => (
      <td>
        <Time value={delivery.created_at} />
      </td>
    ),
  },
  nextAttempt: {
    heading: 'Next attempt',
    cell: (delivery) => (
      <td>
        <Time value={delivery.status === 'pending' ? delivery.next_attempt_at : null} />
      </td>
    ),
  },
} satisfies Record<string, { heading: Heading; cell(delivery: Delivery): VNode }>

export type DeliveryColumn = keyof typeof COLUMNS

/** The deliveries in the given columns, one row each (`data-delivery` its id); `empty` where there are none. */
export function DeliveryTable(props: { deliveries: Delivery[]; columns: DeliveryColumn[]; empty: ComponentChildren }) {
  return (
    <Table
      headings={props.columns.map((column) => COLUMNS[column].heading)}
      rows={props.deliveries}
      empty={props.empty}
      row={(delivery) => <tr data-delivery={delivery.id}>{props.columns.map((column) => COLUMNS[column].cell(delivery))}</tr>}
    />
  )
}

/**
 * A section of the deliveries `filter` selects (an event's, an endpoint's), newest first, kept current while live,
 * with a link to all of them on the deliveries page when there are more than `limit`.
 */
export function LiveDeliveries(props: { title: string; filter: Record<string, string>; limit: number; columns: DeliveryColumn[]; empty: ComponentChildren }) {
  const path = `/webhooks/deliveries${query({ ...props.filter, limit: props.limit })}`
  const deliveries = useLoad(path, () => api<Page<Delivery>>('GET', path))
  const live = useLive(deliveries)
  return (
    <>
      <div class="heading">
        <h2>{props.title}</h2>
        <LiveToggle live={live} />
      </div>
      {deliveries.error !== undefined && <ErrorNote error={deliveries.error} />}
      {deliveries.data && <DeliveryTable deliveries={deliveries.data.data} columns={props.columns} empty={props.empty} />}
      {deliveries.data?.next_cursor && (
        <p>
          <Link to={`/${query(props.filter)}`}>All its deliveries</Link>
        </p>
      )}
    </>
  )
}
