import { useState } from 'preact/hooks'
import { ApiError, api } from '../api.js'
import { LiveRefresh, LoadState } from '../list.js'
import { EndpointName } from '../names.js'
import { Link } from '../router.js'
import { SCOPES, can } from '../session.js'
import { Time } from '../time.js'
import type { Attempt, Delivery, DeliveryWithAttempts, Settings } from '../types.js'
import { Copy, Empty, Status, isNotFound, useLoad } from '../ui.js'

/** A number of seconds in the largest unit that keeps it readable: 5 s, 5 min, 2 h, 1 d 4 h. */
export function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`
  if (seconds < 86_400) return `${+(seconds / 3600).toFixed(1)} h`
  return `${+(seconds / 86_400).toFixed(1)} d`
}

export function DeliveryPage(props: { id: string }) {
  const path = `/webhooks/deliveries/${encodeURIComponent(props.id)}`
  const delivery = useLoad(path, () => api<DeliveryWithAttempts>('GET', path))
  if (isNotFound(delivery.error)) {
    return (
      <section>
        <h1>Delivery not found</h1>
        <Empty title={`There is no delivery ${props.id} in this account.`}>
          <Link to="/">Back to the deliveries</Link>
        </Empty>
      </section>
    )
  }
  const data = delivery.data
  return (
    <section>
      <p class="crumbs">
        <Link to="/">Deliveries</Link> /
      </p>
      <div class="heading">
        <h1>
          Delivery <span class="mono">{props.id}</span> <Copy text={props.id} />
        </h1>
        <LiveRefresh of={delivery} />
      </div>
      <LoadState of={delivery} />
      {data && (
        <>
          <Summary delivery={data} onRetried={delivery.reload} />
          <h2>Attempts</h2>
          <Timeline attempts={data.attempts} />
          <Schedule delivery={data} />
          <h2>Body</h2>
          <Body body={data.body} />
        </>
      )}
    </section>
  )
}

function Summary(props: { delivery: DeliveryWithAttempts; onRetried(): void }) {
  const { delivery } = props
  return (
    <dl class="facts">
      <dt>Status</dt>
      <dd>
        <Status value={delivery.status} /> {can(SCOPES.webhooksWrite) && delivery.status !== 'cancelled' && <Retry id={delivery.id} onRetried={props.onRetried} />}
      </dd>
      <dt>Event</dt>
      <dd>
        <span class="mono">{delivery.event_type}</span> · <Link to={`/?event_id=${delivery.event_id}`} class="mono">{delivery.event_id}</Link>
      </dd>
      <dt>Endpoint</dt>
      <dd>
        <EndpointName id={delivery.endpoint_id} /> <span class="mono muted small">{delivery.endpoint_id}</span>
      </dd>
      <dt>Attempts</dt>
      <dd>{delivery.attempt_count}</dd>
      <dt>Created</dt>
      <dd>
        <Time value={delivery.created_at} />
      </dd>
      <dt>Next attempt</dt>
      <dd>
        <Time value={delivery.next_attempt_at} empty={delivery.status === 'held' ? 'held until the endpoint is enabled' : 'none planned'} />
      </dd>
    </dl>
  )
}

/** Retries by hand; what the API answered, a 409's reason included, is said next to the button. */
function Retry(props: { id: string; onRetried(): void }) {
  const [answer, setAnswer] = useState<{ ok: boolean; text: string } | undefined>()
  const [busy, setBusy] = useState(false)
  const retry = async () => {
    setBusy(true)
    try {
      const delivery = await api<Delivery>('POST', `/webhooks/deliveries/${encodeURIComponent(props.id)}/retry`)
      setAnswer({ ok: true, text: delivery.status === 'held' ? 'Held: it goes out when its endpoint is enabled.' : 'Queued for another attempt now.' })
      props.onRetried()
    } catch (error) {
      setAnswer({ ok: false, text: error instanceof ApiError && error.status === 409 ? `Can't retry: ${error.message}` : error instanceof Error ? error.message : String(error) })
    } finally {
      setBusy(false)
    }
  }
  return (
    <>
      <button type="button" onClick={retry} disabled={busy}>
        Retry now
      </button>
      {answer && (
        <span class={answer.ok ? 'ok' : 'error'} role={answer.ok ? 'status' : 'alert'}>
          {' '}
          {answer.text}
        </span>
      )}
    </>
  )
}

/** Each attempt: what it sent beside what came back. */
function Timeline(props: { attempts: Attempt[] }) {
  if (props.attempts.length === 0) return <Empty title="No attempt yet: the first one starts as soon as a worker picks the delivery up." />
  return (
    <ol class="timeline">
      {props.attempts.map((attempt) => {
        const ok = attempt.response_status !== null && attempt.response_status >= 200 && attempt.response_status < 300
        return (
          <li class={ok ? 'attempt ok' : 'attempt failed'} data-attempt={attempt.number}>
            <div class="attempt-head">
              <strong>Attempt {attempt.number}</strong>
              <span class="outcome">{attempt.response_status !== null ? `HTTP ${attempt.response_status}` : (attempt.error ?? 'no response')}</span>
              <Time value={attempt.started_at} />
              <span class="muted">{attempt.duration_ms !== null ? `${attempt.duration_ms} ms` : 'duration unknown'}</span>
            </div>
            <div class="exchange">
              <div class="request">
                <h3>Request</h3>
                <Request sent={attempt.request} error={attempt.error} />
              </div>
              <div class="response">
                <h3>Response</h3>
                {attempt.response_excerpt ? <pre class="excerpt">{attempt.response_excerpt}</pre> : <p class="muted small">No response body kept.</p>}
              </div>
            </div>
          </li>
        )
      })}
    </ol>
  )
}

/** The URL and the Standard Webhooks headers an attempt went with, as Herald recorded them; the body is the delivery's. */
function Request(props: { sent: Attempt['request']; error: string | null }) {
  const { sent } = props
  if (!sent) return <p class="muted small">{props.error === 'worker_lost' ? 'Not known: the worker making it stopped.' : 'Nothing was sent.'}</p>
  return (
    <>
      <p class="mono wrap">POST {sent.url ?? <span class="muted">(URL not recorded)</span>}</p>
      {sent.headers ? (
        <dl class="headers">
          {Object.entries(sent.headers).map(([name, value]) => (
            <>
              <dt class="mono">{name}</dt>
              <dd class="mono" data-header={name}>
                {value ?? <span class="muted">not recorded</span>}
              </dd>
            </>
          ))}
        </dl>
      ) : (
        <p class="muted small">A back-channel logout token, signed for this attempt and not kept.</p>
      )}
    </>
  )
}

/** The attempts still ahead: the next at `next_attempt_at`, each later one after the schedule's delay (±20%). */
function Schedule(props: { delivery: Delivery }) {
  const { delivery } = props
  const readable = can(SCOPES.settings)
  const settings = useLoad(readable ? 'settings' : 'no-settings', () => (readable ? api<Settings>('GET', '/settings') : Promise.resolve(undefined)))
  if (delivery.status !== 'pending' || !delivery.next_attempt_at) return null
  const schedule = settings.data?.webhook_retry_schedule
  // Attempt n + 1 follows attempt n after schedule[n - 1]; the next is attempt_count + 1, the one after it waits
  // schedule[attempt_count].
  const later = schedule ? schedule.slice(delivery.attempt_count) : []
  return (
    <>
      <h2>Still ahead</h2>
      <ol class="ahead">
        <li>
          Attempt {delivery.attempt_count + 1}: <Time value={delivery.next_attempt_at} />
        </li>
        {later.map((delay, i) => (
          <li>
            Attempt {delivery.attempt_count + 2 + i}: about {duration(delay)} after the one before
          </li>
        ))}
      </ol>
      {!readable && <p class="muted small">The rest of the retry schedule is in the account's settings, which this token may not read.</p>}
      {schedule && later.length === 0 && <p class="muted small">This is the last attempt of the schedule: if it fails, the delivery ends failed and can be retried by hand.</p>}
    </>
  )
}

/** The body every attempt sent, laid out to read, and byte for byte as it was signed. */
function Body(props: { body: string | null }) {
  if (props.body === null) return <p class="muted">Each attempt carried a back-channel logout token signed for it, which is not kept.</p>
  return (
    <>
      <pre class="payload">{JSON.stringify(JSON.parse(props.body), null, 2)}</pre>
      <details>
        <summary>As sent, byte for byte (what the signature covers)</summary>
        <pre class="wrap" data-body>
          {props.body}
        </pre>
      </details>
    </>
  )
}
