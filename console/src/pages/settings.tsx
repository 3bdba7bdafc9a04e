import { api } from '../api.js'
import { SCOPES, can } from '../session.js'
import { ErrorNote, useLoad } from '../ui.js'
import { duration } from './delivery.js'
import { SigningKeys } from './signing-keys.js'

// The account's settings as a person reads them (lifetimes in words, the retry schedule as a timeline), and its
// signing keys.

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
      {can(SCOPES.keys) && <SigningKeys />}
    </section>
  )
}
