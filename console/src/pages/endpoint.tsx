import { useState } from 'preact/hooks'
import { type Page, api, query } from '../api.js'
import { ClientName, endpointNames } from '../names.js'
import { Link } from '../router.js'
import { SCOPES, can } from '../session.js'
import { Time } from '../time.js'
import type { Delivery, Endpoint, Subscription } from '../types.js'
import { LiveDeliveries } from './delivery-table.js'
import { DeleteEndpoint, EditEndpoint, Recover, Secret } from './endpoint-actions.js'
import { EndpointActivity } from './endpoint-stats.js'
import { Copy, Empty, ErrorNote, Status, isNotFound, useLoad } from '../ui.js'

/** Deliveries an endpoint's page lists; the rest are a link away, in the deliveries list. */
const RECENT_DELIVERIES = 10

export function EndpointPage(props: { id: string }) {
  const path = `/webhooks/endpoints/${encodeURIComponent(props.id)}`
  const endpoint = useLoad(path, () => api<Endpoint>('GET', path))
  const subscriptionsPath = `/webhooks/subscriptions${query({ endpoint_id: props.id, limit: 200 })}`
  const subscriptions = useLoad(subscriptionsPath, () => api<Page<Subscription>>('GET', subscriptionsPath))
  if (isNotFound(endpoint.error)) {
    return (
      <section>
        <h1>Endpoint not found</h1>
        <Empty title={`There is no endpoint ${props.id} in this account.`}>
          <Link to="/endpoints">Back to the endpoints</Link>
        </Empty>
      </section>
    )
  }
  const [editing, setEditing] = useState(false)
  const data = endpoint.data
  const writable = can(SCOPES.webhooksWrite)
  const types = subscriptions.data?.data.flatMap((subscription) => subscription.event_types) ?? []
  return (
    <section>
      <p class="crumbs">
        <Link to="/endpoints">Endpoints</Link> /
      </p>
      <div class="heading">
        <h1>
          Endpoint <span class="mono">{props.id}</span> <Copy text={props.id} />
        </h1>
        <div class="actions">
          <Link to={`/${query({ endpoint_id: props.id })}`}>Its deliveries</Link>
          {data && writable && !data.client_id && !editing && (
            <button type="button" class="secondary" onClick={() => setEditing(true)}>
              Edit
            </button>
          )}
        </div>
      </div>
      {data?.client_id && (
        <p class="notice" data-client-managed>
          This endpoint carries the back-channel logout of client <ClientName id={data.client_id} /> <Copy text={data.client_id} />: its URL and its
          deletion follow the client's <code>backchannel_logout_uri</code>, and it has no secret (logout tokens are signed with the account's keys), so the console shows it
          read-only. Disabling it holds the logout tokens.
        </p>
      )}
      {data && editing && (
        <EditEndpoint
          endpoint={data}
          onDone={(changed) => {
            setEditing(false)
            if (!changed) return
            endpoint.reload()
            // Its description or URL, which other pages call it by.
            endpointNames.forget()
          }}
        />
      )}
      {endpoint.error !== undefined && <ErrorNote error={endpoint.error} />}
      {data && (
        <dl class="facts">
          <dt>Status</dt>
          <dd>
            <Status value={data.status} />
            {data.disabled_reason && <span class="muted"> ({data.disabled_reason}, <Time value={data.disabled_at} />)</span>}{' '}
            {can(SCOPES.webhooksWrite) && <Toggle endpoint={data} onChanged={endpoint.reload} />}
          </dd>
          <dt>URL</dt>
          <dd class="mono wrap">{data.url}</dd>
          <dt>Description</dt>
          <dd>{data.description || <span class="muted">—</span>}</dd>
          <dt>Limits</dt>
          <dd>
            {data.rate_limit === null ? 'no rate limit' : `${data.rate_limit} per second`}, {data.max_in_flight} in flight at once
          </dd>
          <dt>Subscribed to</dt>
          <dd>{!subscriptions.data ? <span class="muted">…</span> : types.length > 0 ? <span class="mono">{types.join(', ')}</span> : <span class="muted">no event types yet</span>}</dd>
          <dt>Created</dt>
          <dd>
            <Time value={data.created_at} />
          </dd>
        </dl>
      )}
      {subscriptions.error !== undefined && <ErrorNote error={subscriptions.error} />}
      {data && (
        <>
          <h2>Last 24 hours</h2>
          <EndpointActivity endpointId={data.id} />
          <LiveDeliveries
            title="Recent deliveries"
            filter={{ endpoint_id: data.id }}
            limit={RECENT_DELIVERIES}
            columns={['status', 'delivery', 'eventType', 'attempts', 'outcome', 'created']}
            empty={<Empty title="No deliveries yet: publish an event it subscribes to, or send it a test event." />}
          />
        </>
      )}
      {data && writable && !data.client_id && <TestDelivery endpointId={data.id} />}
      {data && writable && !data.client_id && <Secret endpointId={data.id} />}
      {data && writable && <Recover endpointId={data.id} />}
      {data && writable && !data.client_id && <DeleteEndpoint endpoint={data} />}
    </section>
  )
}

/** Disables (new deliveries are held) or enables (held ones flow again) the endpoint. */
function Toggle(props: { endpoint: Endpoint; onChanged(): void }) {
  const [error, setError] = useState<unknown>()
  const next = props.endpoint.status === 'active' ? 'disabled' : 'active'
  const change = async () => {
    setError(undefined)
    try {
      await api<Endpoint>('PATCH', `/webhooks/endpoints/${encodeURIComponent(props.endpoint.id)}`, { status: next })
      props.onChanged()
    } catch (changeError) {
      setError(changeError)
    }
  }
  return (
    <>
      <button type="button" class="secondary" onClick={change}>
        {next === 'disabled' ? 'Disable' : 'Enable'}
      </button>
      {error !== undefined && <ErrorNote error={error} />}
    </>
  )
}

/**
 * Sends this endpoint alone a `webhook.test` event (POST /webhooks/endpoints/{id}/test), through the ordinary queue:
 * no subscriber of any type gets it, and the endpoint gets it whatever it subscribes to.
 */
function TestDelivery(props: { endpointId: string }) {
  const [sent, setSent] = useState<Delivery | undefined>()
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    setError(undefined)
    setSent(undefined)
    setBusy(true)
    try {
      setSent(await api<Delivery>('POST', `/webhooks/endpoints/${encodeURIComponent(props.endpointId)}/test`))
    } catch (sendError) {
      setError(sendError)
    } finally {
      setBusy(false)
    }
  }
  return (
    <form class="card" onSubmit={submit} aria-label="Send a test event">
      <h2>Send a test event</h2>
      <p class="muted small">
        Sends this endpoint, and no other, a <code>webhook.test</code> event: signed, attempted and recorded like any delivery.
      </p>
      <div class="actions">
        <button type="submit" disabled={busy}>
          Send test event
        </button>
      </div>
      {sent && (
        <p class="ok" role="status">
          {sent.status === 'held' ? 'Held until the endpoint is enabled: ' : 'Queued: '}
          <Link to={`/deliveries/${sent.id}`}>
            delivery <span class="mono">{sent.id}</span>
          </Link>
        </p>
      )}
      {error !== undefined && <ErrorNote error={error} />}
    </form>
  )
}
