import { useState } from 'preact/hooks'
import { api } from '../api.js'
import { SCOPES, can } from '../session.js'
import { Table } from '../list.js'
import { ErrorNote, Status, Time, useLoad } from '../ui.js'
import { duration } from './delivery.js'

// The account's settings as a person reads them (lifetimes in words, the retry schedule as a timeline), and its
// signing keys with their lifecycle and a rotation.

interface AccountSettings {
  access_token_ttl: number
  refresh_token_idle_ttl: number
  refresh_token_absolute_ttl: number
  id_token_ttl: number
  authorization_code_ttl: number
  session_ttl: number
  webhook_retry_schedule: number[]
  webhook_retention_days: number
  webhook_disable_after: number
}

const LIFETIMES: Array<[keyof AccountSettings, string]> = [
  ['access_token_ttl', 'Access tokens'],
  ['id_token_ttl', 'ID tokens'],
  ['authorization_code_ttl', 'Authorization codes'],
  ['refresh_token_idle_ttl', 'Refresh tokens, unused'],
  ['refresh_token_absolute_ttl', 'Refresh tokens, at most'],
  ['session_ttl', 'Browser sessions'],
]

/** Each attempt of a failing delivery and when it starts, counted from the first: the schedule's delays added up. */
export function retryTimeline(schedule: number[]): Array<{ attempt: number; after: number; total: number }> {
  let total = 0
  return [{ attempt: 1, after: 0, total: 0 }, ...schedule.map((delay, i) => ({ attempt: i + 2, after: delay, total: (total += delay) }))]
}

export function SettingsPage() {
  const settings = useLoad('settings', () => api<AccountSettings>('GET', '/settings'))
  const data = settings.data
  return (
    <section>
      <h1>Settings</h1>
      {settings.error !== undefined && <ErrorNote error={settings.error} />}
      {data && (
        <>
          <h2>Lifetimes</h2>
          <dl class="facts">
            {LIFETIMES.map(([name, label]) => (
              <>
                <dt>{label}</dt>
                <dd data-setting={name}>{duration(data[name] as number)}</dd>
              </>
            ))}
          </dl>
          <h2>Webhook retries</h2>
          <ol class="ahead" data-retry-timeline>
            {retryTimeline(data.webhook_retry_schedule).map((step) => (
              <li>{step.attempt === 1 ? 'Attempt 1: at once' : `Attempt ${step.attempt}: ${duration(step.after)} later (${duration(step.total)} after the first)`}</li>
            ))}
          </ol>
          <p class="muted small">Each delay varies by ±20%. After the last attempt a delivery ends failed and can be retried by hand.</p>
          <h2>Retention and health</h2>
          <dl class="facts">
            <dt>Finished deliveries and events kept</dt>
            <dd>{data.webhook_retention_days} days</dd>
            <dt>An endpoint failing without a success is disabled after</dt>
            <dd>{duration(data.webhook_disable_after)}</dd>
          </dl>
        </>
      )}
      {can(SCOPES.keys) && <Keys />}
    </section>
  )
}

interface SigningKey {
  kid: string
  alg: string
  status: string
  signs_from: string
  retires_at: string | null
  published_until: string | null
}

function Keys() {
  const keys = useLoad('keys', () => api<{ data: SigningKey[] }>('GET', '/keys'))
  const [said, setSaid] = useState<string | undefined>()
  const [error, setError] = useState<unknown>()
  const rotate = async () => {
    setError(undefined)
    try {
      await api('POST', '/keys/rotate')
      setSaid('Rotated: the new keys are published now and sign once cached key sets have expired.')
      keys.reload()
    } catch (rotateError) {
      setError(rotateError)
    }
  }
  return (
    <>
      <div class="heading">
        <h2>Signing keys</h2>
        <button type="button" class="secondary" onClick={() => void rotate()}>
          Rotate keys
        </button>
      </div>
      {said && (
        <p class="ok" role="status">
          {said}
        </p>
      )}
      {error !== undefined && <ErrorNote error={error} />}
      {keys.error !== undefined && <ErrorNote error={keys.error} />}
      {keys.data && (
        <Table
          headings={['Key', 'Algorithm', 'Status', 'Signs from', 'Retires', 'Published until']}
          rows={keys.data.data}
          row={(key) => (
            <tr data-key={key.kid}>
              <td class="mono">{key.kid}</td>
              <td>{key.alg}</td>
              <td>
                <Status value={key.status} />
              </td>
              <td>
                <Time value={key.signs_from} />
              </td>
              <td>
                <Time value={key.retires_at} />
              </td>
              <td>
                <Time value={key.published_until} />
              </td>
            </tr>
          )}
        />
      )}
    </>
  )
}
