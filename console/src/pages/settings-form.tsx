import { useState } from 'preact/hooks'
import { ApiError, api } from '../api.js'
import type { FieldError, Settings } from '../types.js'
import { ErrorNote } from '../ui.js'
import { RetryTimeline } from './retry-timeline.js'
import { SETTING_FIELDS, SETTING_GROUPS, type SettingField, type SettingName, fromInput, inWords, parseDelays, toInput } from './settings-fields.js'

// The settings as a form: every field in the page's groups, lifetimes as seconds with their length in words beside,
// the retry schedule as comma-separated seconds with its timeline. Only what changed is sent; the API checks it all.

type Inputs = Record<SettingName, string | boolean>

const inputId = (name: SettingName) => `setting-${name}`

/** The fields whose input no longer says what the settings say, as the API takes them. */
function changedFields(settings: Settings, inputs: Inputs): Partial<Record<SettingName, unknown>> {
  const patch: Partial<Record<SettingName, unknown>> = {}
  for (const field of SETTING_FIELDS) {
    const value = fromInput(field, inputs[field.name])
    if (JSON.stringify(value) !== JSON.stringify(settings[field.name])) patch[field.name] = value
  }
  return patch
}

/** The API's field errors by setting: `/body/name` is the setting, `/body/name/2` its third delay. */
function errorsBySetting(errors: readonly FieldError[]): Map<string, string[]> {
  const found = new Map<string, string[]>()
  for (const { pointer, message } of errors) {
    const [, body, name, index] = pointer.split('/')
    if (body !== 'body' || name === undefined) continue
    const text = index === undefined ? message : `delay ${Number(index) + 1}: ${message}`
    found.set(name, [...(found.get(name) ?? []), text])
  }
  return found
}

/** Beside a number input: its length in words, or nothing while it isn't a number. */
function inWordsAsTyped(field: SettingField, input: string): string {
  const value = Number(input)
  if (input.trim() === '' || !Number.isFinite(value)) return ''
  return inWords(field, value)
}

export function EditSettings(props: { settings: Settings; onDone(saved?: { changed: SettingField[] }): void }) {
  const [inputs, setInputs] = useState<Inputs>(() => Object.fromEntries(SETTING_FIELDS.map((field) => [field.name, toInput(field, props.settings[field.name])])) as Inputs)
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const [unchanged, setUnchanged] = useState(false)
  const fieldErrors = errorsBySetting(error instanceof ApiError ? error.fields : [])
  const set = (name: SettingName, value: string | boolean) => {
    setUnchanged(false)
    setInputs({ ...inputs, [name]: value })
  }
  const submit = async (event: Event) => {
    event.preventDefault()
    setError(undefined)
    const patch = changedFields(props.settings, inputs)
    const changed = SETTING_FIELDS.filter((field) => field.name in patch)
    if (changed.length === 0) {
      setUnchanged(true)
      return
    }
    setBusy(true)
    try {
      await api<Settings>('PATCH', '/settings', patch)
      props.onDone({ changed })
    } catch (saveError) {
      setError(saveError)
    } finally {
      setBusy(false)
    }
  }
  const control = (field: SettingField) => {
    const id = inputId(field.name)
    const input = inputs[field.name]
    const problems = fieldErrors.get(field.name)
    const words = typeof input === 'string' && (field.kind === 'seconds' || field.kind === 'days' || field.kind === 'days-or-never') ? inWordsAsTyped(field, input) : ''
    const describedBy = [words && `${id}-words`, problems && `${id}-error`].filter(Boolean).join(' ') || undefined
    const common = { id, name: field.name, 'aria-invalid': problems ? true : undefined, 'aria-describedby': describedBy }
    const onText = (event: Event) => set(field.name, (event.currentTarget as HTMLInputElement | HTMLSelectElement).value)
    return (
      <div class="setting" data-field={field.name}>
        {field.kind === 'flag' ? (
          <label class="check">
            <input type="checkbox" checked={input === true} onChange={(event) => set(field.name, event.currentTarget.checked)} {...common} />
            {field.label}
          </label>
        ) : (
          <label for={id}>
            {field.label}
            {LABEL_NOTES[field.kind]}
          </label>
        )}
        <div class="setting-input">
          {field.kind === 'alg' && (
            <select value={input as string} onChange={onText} {...common}>
              <option value="ES256">ES256</option>
              <option value="RS256">RS256</option>
            </select>
          )}
          {field.kind === 'choice' && (
            <select value={input as string} onChange={onText} {...common}>
              {field.options?.map((option) => (
                <option value={option}>{option}</option>
              ))}
            </select>
          )}
          {(field.kind === 'seconds' || field.kind === 'days' || field.kind === 'count') && <input type="number" step={1} required value={input as string} onInput={onText} {...common} />}
          {field.kind === 'days-or-never' && <input type="number" step={1} value={input as string} onInput={onText} {...common} />}
          {field.kind === 'url' && <input type="url" spellcheck={false} class="wide" value={input as string} onInput={onText} {...common} />}
          {(field.kind === 'audience' || field.kind === 'delays' || field.kind === 'scopes' || field.kind === 'list') && <input type="text" spellcheck={false} class="wide" value={input as string} onInput={onText} {...common} />}
          {words && (
            <span id={`${id}-words`} class="muted">
              {words}
            </span>
          )}
        </div>
        {problems && (
          <p id={`${id}-error`} class="field-error" data-field-error={field.name}>
            {problems.join('; ')}
          </p>
        )}
        {field.kind === 'delays' && <RetryTimeline schedule={parseDelays(input as string).filter(Number.isFinite)} label="The attempts this schedule makes" />}
      </div>
    )
  }
  return (
    <form class="card wide settings-form" onSubmit={submit} aria-label="Edit settings">
      <h2>Edit settings</h2>
      {SETTING_GROUPS.map((group) => (
        <fieldset class="group">
          <legend>{group.title}</legend>
          {group.fields.map(control)}
        </fieldset>
      ))}
      {error !== undefined && <ErrorNote error={error} />}
      {unchanged && (
        <p class="muted" role="status">
          Nothing to save: no setting was changed.
        </p>
      )}
      <div class="actions">
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : 'Save settings'}
        </button>
        <button type="button" class="secondary" onClick={() => props.onDone()}>
          Cancel
        </button>
      </div>
    </form>
  )
}

/** What a label adds to say how its input is typed. */
const LABEL_NOTES: Record<SettingField['kind'], string> = {
  seconds: ' (seconds)',
  days: ' (days)',
  delays: ' (seconds, comma-separated)',
  url: ' (https; empty for none)',
  audience: ' (empty for the issuer)',
  alg: '',
  flag: '',
  choice: '',
  scopes: ' (space-separated)',
  list: ' (space-separated)',
  count: '',
  'days-or-never': ' (days; empty for never)',
}
