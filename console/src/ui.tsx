import type { ComponentChildren } from 'preact'
import { useCallback, useEffect, useState } from 'preact/hooks'
import { ApiError, SessionEnded } from './api.js'

/** Every page's times are relative ("3 min ago"), the exact time on hover: see time.tsx. */
export { Time } from './time.js'

/** A status in words, coloured by how it went: nothing relies on the colour alone. */
export function Status(props: { value: string }) {
  return <span class={`status status-${props.value}`}>{props.value}</span>
}

/** What went wrong, in the words of the problem document's `detail`. */
export function ErrorNote(props: { error: unknown }) {
  if (props.error instanceof SessionEnded) return null
  const message = props.error instanceof Error ? props.error.message : String(props.error)
  return (
    <p class="error" role="alert">
      {message}
    </p>
  )
}

/** What an action did, announced to screen readers; nothing while there is nothing to say. */
export function OkNote(props: { text: string | undefined }) {
  if (!props.text) return null
  return (
    <p class="ok" role="status">
      {props.text}
    </p>
  )
}

/** An action's outcome as the page says it: what it did, or why it was refused. */
export interface Outcome {
  said: string | undefined
  error: unknown
  /** Runs `call`, forgetting the last outcome; says `done` once it has succeeded, and answers whether it did. */
  run(call: () => Promise<unknown>, done: string): Promise<boolean>
}

export function useOutcome(): Outcome {
  const [said, setSaid] = useState<string | undefined>()
  const [error, setError] = useState<unknown>()
  const run = async (call: () => Promise<unknown>, done: string) => {
    setError(undefined)
    setSaid(undefined)
    try {
      await call()
      setSaid(done)
      return true
    } catch (callError) {
      setError(callError)
      return false
    }
  }
  return { said, error, run }
}

export function OutcomeNote(props: { of: Outcome }) {
  return (
    <>
      <OkNote text={props.of.said} />
      {props.of.error !== undefined && <ErrorNote error={props.of.error} />}
    </>
  )
}

export function Empty(props: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <p class="empty-title">{props.title}</p>
      {props.children}
    </div>
  )
}

export function isNotFound(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404
}

export interface Loaded<T> {
  data?: T
  error?: unknown
  loading: boolean
  reload(): void
}

/** Loads `load()` whenever `key` changes, and on reload, which keeps the last answer while the next one comes. */
export function useLoad<T>(key: string, load: () => Promise<T>): Loaded<T> {
  const [state, setState] = useState<{ key: string; data?: T; error?: unknown; loading: boolean }>({ key, loading: true })
  const [round, setRound] = useState(0)
  useEffect(() => {
    let live = true
    // A reload keeps what it shows until the answer comes; another key (a filter, a page) shows nothing of the last.
    setState((previous) => (previous.key === key ? { ...previous, loading: true } : { key, loading: true }))
    load().then(
      (data) => live && setState({ key, data, loading: false }),
      (error: unknown) => live && setState({ key, error, loading: false }),
    )
    return () => {
      live = false
    }
    // `load` is a new closure on every render; `key` names what it loads.
  }, [key, round])
  const reload = useCallback(() => setRound((n) => n + 1), [])
  const current = state.key === key
  return { data: current ? state.data : undefined, error: current ? state.error : undefined, loading: state.loading || !current, reload }
}

/** Copies an id with one click, and says so. */
export function Copy(props: { text: string }) {
  const [done, setDone] = useState(false)
  const copy = () => {
    void navigator.clipboard?.writeText(props.text).then(() => {
      setDone(true)
      setTimeout(() => setDone(false), 1500)
    })
  }
  return (
    <button type="button" class="copy" onClick={copy} aria-label={`Copy ${props.text}`}>
      {done ? 'Copied' : 'Copy'}
    </button>
  )
}
