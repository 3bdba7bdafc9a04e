import { useEffect, useState } from 'preact/hooks'
import { type Page, api, query } from '../api.js'
import { navigate } from '../router.js'
import type { Delivery, Endpoint, RecoveryJob } from '../types.js'
import { Copy, ErrorNote } from '../ui.js'
import { toLocalInput, toUtc } from './deliveries.js'

// What a writer may do to an endpoint beyond disabling it: edit it, reveal or rotate its secret, recover its failed
// deliveries, delete it. Each says what the API answered.

const path = (id: string, rest = '') => `/webhooks/endpoints/${encodeURIComponent(id)}${rest}`

/** A number field's value for the API: empty is `null` (no limit) where the API allows it. */
function numberOrNull(text: string): number | null {
  return text.trim() === '' ? null : Number(text)
}

type EditFields = Record<'url' | 'description' | 'rate_limit' | 'max_in_flight', string>

export function EditEndpoint(props: { endpoint: Endpoint; onDone(changed: boolean): void }) {
  const { endpoint } = props
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  // Held in state: a controlled input given only the endpoint's value would return to it on every render.
  const [values, setValues] = useState<EditFields>({
    url: endpoint.url,
    description: endpoint.description,
    rate_limit: endpoint.rate_limit === null ? '' : String(endpoint.rate_limit),
    max_in_flight: String(endpoint.max_in_flight),
  })
  const field = (name: keyof EditFields) => ({
    name,
    value: values[name],
    onInput: (event: Event) => setValues({ ...values, [name]: (event.currentTarget as HTMLInputElement).value }),
  })
  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      await api<Endpoint>('PATCH', path(endpoint.id), {
        url: values.url.trim(),
        description: values.description.trim(),
        rate_limit: numberOrNull(values.rate_limit),
        max_in_flight: Number(values.max_in_flight),
      })
      props.onDone(true)
    } catch (saveError) {
      setError(saveError)
    } finally {
      setBusy(false)
    }
  }
  return (
    <form class="card" onSubmit={submit} aria-label="Edit the endpoint">
      <h2>Edit the endpoint</h2>
      <label for="edit-url">URL</label>
      <input id="edit-url" type="url" required spellcheck={false} {...field('url')} />
      <label for="edit-description">Description</label>
      <input id="edit-description" maxLength={1024} {...field('description')} />
      <label for="edit-rate">Rate limit (deliveries per second; empty for none)</label>
      <input id="edit-rate" type="number" min={1} max={10_000} {...field('rate_limit')} />
      <label for="edit-in-flight">Attempts in flight at once</label>
      <input id="edit-in-flight" type="number" min={1} max={1000} required {...field('max_in_flight')} />
      {error !== undefined && <ErrorNote error={error} />}
      <div class="actions">
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : 'Save'}
        </button>
        <button type="button" class="secondary" onClick={() => props.onDone(false)}>
          Cancel
        </button>
      </div>
    </form>
  )
}

/** The signing secret, shown only when asked for; a rotation shows the new one once, and how long the old one signs. */
export function Secret(props: { endpointId: string }) {
  const [shown, setShown] = useState<{ secret: string; note?: string } | undefined>()
  const [error, setError] = useState<unknown>()
  const act = async (rotate: boolean) => {
    setError(undefined)
    try {
      if (rotate) {
        const rotated = await api<{ secret: string; previous_secret_expires_at: string | null }>('POST', path(props.endpointId, '/secret/rotate'), {})
        const until = rotated.previous_secret_expires_at ? `until ${new Date(rotated.previous_secret_expires_at).toLocaleString()}` : 'no longer'
        setShown({ secret: rotated.secret, note: `Rotated: this is the new secret, shown once. The previous one keeps signing beside it ${until}.` })
      } else {
        setShown(await api<{ secret: string }>('GET', path(props.endpointId, '/secret')))
      }
    } catch (secretError) {
      setError(secretError)
    }
  }
  return (
    <div class="card">
      <h2>Signing secret</h2>
      <p class="muted small">Receivers check each delivery's signature with it (Standard Webhooks).</p>
      {shown && (
        <p role="status">
          {shown.note && <span class="ok">{shown.note} </span>}
          <code class="secret" data-secret>
            {shown.secret}
          </code>{' '}
          <Copy text={shown.secret} />
        </p>
      )}
      {error !== undefined && <ErrorNote error={error} />}
      <div class="actions">
        <button type="button" class="secondary" onClick={() => (shown ? setShown(undefined) : void act(false))}>
          {shown ? 'Hide secret' : 'Reveal secret'}
        </button>
        <button type="button" class="secondary" onClick={() => void act(true)}>
          Rotate secret
        </button>
      </div>
    </div>
  )
}

/** Queues the failed deliveries created since a time again, and follows the job until it is done. */
export function Recover(props: { endpointId: string }) {
  const [since, setSince] = useState(() => toLocalInput(new Date(Date.now() - 86_400_000).toISOString()))
  const [job, setJob] = useState<RecoveryJob | undefined>()
  const [error, setError] = useState<unknown>()
  useEffect(() => {
    if (!job || job.status === 'done') return
    // The job runs in the background: its progress is read again each second until it is done.
    const timer = setTimeout(() => {
      api<RecoveryJob>('GET', `/webhooks/jobs/${encodeURIComponent(job.id)}`).then(setJob, setError)
    }, 1000)
    return () => clearTimeout(timer)
  }, [job])
  const submit = async (event: Event) => {
    event.preventDefault()
    setError(undefined)
    setJob(undefined)
    try {
      setJob(await api<RecoveryJob>('POST', path(props.endpointId, '/recover'), { since: toUtc(since) }))
    } catch (recoverError) {
      setError(recoverError)
    }
  }
  return (
    <form class="card" onSubmit={submit} aria-label="Recover failed deliveries">
      <h2>Recover failed deliveries</h2>
      <p class="muted small">Queues again every failed delivery of this endpoint created since the time below: each gets a new attempt now.</p>
      <label for="recover-since">Failed deliveries created since</label>
      <input id="recover-since" type="datetime-local" required value={since} onInput={(event) => setSince(event.currentTarget.value)} />
      <div class="actions">
        <button type="submit" disabled={job?.status === 'pending'}>
          Recover
        </button>
      </div>
      {job && (
        <p class={job.status === 'done' ? 'ok' : 'muted'} role="status" data-job={job.id}>
          {job.status === 'done' ? `Done: ${job.requeued} failed ${job.requeued === 1 ? 'delivery' : 'deliveries'} queued again.` : `Recovering… ${job.requeued} queued again so far.`}
        </p>
      )}
      {error !== undefined && <ErrorNote error={error} />}
    </form>
  )
}

/** How many unfinished deliveries a deletion cancels: pending and held, counted a page at a time ("at least" beyond one). */
async function unfinished(endpointId: string): Promise<string> {
  const count = async (status: string) => {
    const page = await api<Page<Delivery>>('GET', `/webhooks/deliveries${query({ endpoint_id: endpointId, status, limit: 200 })}`)
    return { n: page.data.length, more: page.next_cursor !== null }
  }
  const [pending, held] = await Promise.all([count('pending'), count('held')])
  const n = pending.n + held.n
  const words = `${n} unfinished ${n === 1 ? 'delivery' : 'deliveries'} (pending or held)`
  return pending.more || held.more ? `at least ${words}` : words
}

export function DeleteEndpoint(props: { endpoint: Endpoint }) {
  const [confirming, setConfirming] = useState<string | undefined>()
  const [error, setError] = useState<unknown>()
  const ask = async () => {
    setError(undefined)
    try {
      setConfirming(await unfinished(props.endpoint.id))
    } catch (countError) {
      setError(countError)
    }
  }
  const remove = async () => {
    try {
      await api('DELETE', path(props.endpoint.id))
      navigate('/endpoints')
    } catch (deleteError) {
      setError(deleteError)
    }
  }
  return (
    <div class="card danger">
      <h2>Delete the endpoint</h2>
      {!confirming ? (
        <div class="actions">
          <button type="button" class="secondary" onClick={() => void ask()}>
            Delete endpoint…
          </button>
        </div>
      ) : (
        <>
          <p role="alert">
            Deleting <span class="mono">{props.endpoint.id}</span> removes its subscriptions and cancels {confirming}. This can't be undone.
          </p>
          <div class="actions">
            <button type="button" class="destructive" onClick={() => void remove()}>
              Delete for good
            </button>
            <button type="button" class="secondary" onClick={() => setConfirming(undefined)}>
              Keep it
            </button>
          </div>
        </>
      )}
      {error !== undefined && <ErrorNote error={error} />}
    </div>
  )
}
