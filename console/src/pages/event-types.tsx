import { api, query } from '../api.js'
import { Link } from '../router.js'
import type { EventType } from '../types.js'
import { LoadState, Table } from '../list.js'
import { useLoad } from '../ui.js'

// The catalog of event types, one row each: Herald's own and the custom types the account has published, with the
// example data folded away until asked for.

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
      {types.data && (
        <div class="stacked">
          <Table
            headings={['Type', 'Description', 'Example']}
            rows={types.data.data}
            row={(type) => (
              <tr data-event-type={type.name}>
                <td>
                  <Link to={`/events${query({ type: type.name })}`} class="mono">
                    {type.name}
                  </Link>{' '}
                  {type.custom && <span class="badge">custom</span>}
                </td>
                <td class="text">{type.description}</td>
                <td>
                  <details>
                    <summary>Example data</summary>
                    <pre>{JSON.stringify(type.example, null, 2)}</pre>
                  </details>
                </td>
              </tr>
            )}
          />
        </div>
      )}
    </section>
  )
}
