import { useState } from 'preact/hooks'
import { api } from '../api.js'
import { SCOPES, can } from '../session.js'
import type { Settings } from '../types.js'
import { ErrorNote, OkNote, useLoad } from '../ui.js'
import { RetryTimeline } from './retry-timeline.js'
import { SETTING_GROUPS, inWords } from './settings-fields.js'
import { EditSettings } from './settings-form.js'
import { SigningKeys } from './signing-keys.js'

// The account's settings as a person reads them (lifetimes in words, the retry schedule as a timeline), a form that
// changes them, and the account's signing keys.

export function SettingsPage() {
  const settings = useLoad('settings', () => api<Settings>('GET', '/settings'))
  const [editing, setEditing] = useState(false)
  const [said, setSaid] = useState<string | undefined>()
  const data = settings.data
  return (
    <section>
      <div class="heading">
        <h1>Settings</h1>
        {data && !editing && (
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setSaid(undefined)
              setEditing(true)
            }}
          >
            Edit settings
          </button>
        )}
      </div>
      <OkNote text={said} />
      {settings.error !== undefined && <ErrorNote error={settings.error} />}
      {data && editing && (
        <EditSettings
          settings={data}
          onDone={(saved) => {
            setEditing(false)
            if (!saved) return
            setSaid(`Saved ${saved.changed.length === 1 ? 'one setting' : `${saved.changed.length} settings`}: ${saved.changed.map((field) => field.label).join('; ')}. Below, the settings as Herald now has them.`)
            settings.reload()
          }}
        />
      )}
      {data && !editing && <SettingsFacts settings={data} />}
      {can(SCOPES.keys) && <SigningKeys />}
    </section>
  )
}

function SettingsFacts(props: { settings: Settings }) {
  return (
    <>
      {SETTING_GROUPS.map((group) => (
        <>
          <h2>{group.title}</h2>
          {group.fields.some((field) => field.kind === 'delays') && (
            <>
              <RetryTimeline schedule={props.settings.webhook_retry_schedule} />
              <p class="muted small">Each delay varies by ±20%. After the last attempt a delivery ends failed and can be retried by hand.</p>
            </>
          )}
          <dl class="facts">
            {group.fields
              .filter((field) => field.kind !== 'delays')
              .map((field) => (
                <>
                  <dt>{field.label}</dt>
                  <dd data-setting={field.name}>{inWords(field, props.settings[field.name])}</dd>
                </>
              ))}
          </dl>
        </>
      ))}
    </>
  )
}
