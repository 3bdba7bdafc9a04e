import type { ComponentChildren, VNode } from 'preact'
import { type Heading, Table } from '../list.js'
import { Link } from '../router.js'
import type { Delivery } from '../types.js'
import { Status, Time } from '../ui.js'

// Deliveries as rows, for the deliveries page and for an event's page: each picks the columns it shows, in its order.

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
        <Link to={`/endpoints/${delivery.endpoint_id}`} class="mono">
          {delivery.endpoint_id}
        </Link>
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
