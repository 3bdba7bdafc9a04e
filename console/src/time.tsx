import { useEffect, useState } from 'preact/hooks'

// Times as people scan them in a list, "3 min ago", with the exact time on hover; one shared timer keeps them current.

const EXACT = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' })
const DAY = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' })

/** Below each limit (seconds), a time is said in that unit; past the last, as its date. */
const UNITS: Array<{ below: number; seconds: number; name: string }> = [
  { below: 60, seconds: 1, name: 's' },
  { below: 3600, seconds: 60, name: 'min' },
  { below: 86_400, seconds: 3600, name: 'h' },
  { below: 30 * 86_400, seconds: 86_400, name: 'd' },
]

/** `at` (epoch ms) seen from `now`: `just now`, `12 s ago`, `3 min ago`, `in 2 h`, or beyond 30 days its date. */
export function relativeTime(at: number, now: number): string {
  const seconds = Math.round((now - at) / 1000)
  const distance = Math.abs(seconds)
  if (distance < 5) return seconds >= 0 ? 'just now' : 'in a moment'
  const unit = UNITS.find((candidate) => distance < candidate.below)
  if (!unit) return DAY.format(at)
  const count = `${Math.floor(distance / unit.seconds)} ${unit.name}`
  return seconds >= 0 ? `${count} ago` : `in ${count}`
}

/** The exact time, in the browser's zone and in UTC, as the hover text says it. */
export function exactTime(value: string): string {
  const date = new Date(value)
  return `${EXACT.format(date)} (${date.toISOString().replace('T', ' ').replace(/\.\d+Z$/, '')} UTC)`
}

const TICK_MS = 15_000
const ticking = new Set<() => void>()
let timer: ReturnType<typeof setInterval> | undefined

/** Calls `tick` every few seconds while subscribed; one timer for every time on the page, none when none is shown. */
function onTick(tick: () => void): () => void {
  ticking.add(tick)
  timer ??= setInterval(() => ticking.forEach((each) => each()), TICK_MS)
  return () => {
    ticking.delete(tick)
    if (ticking.size > 0) return
    clearInterval(timer)
    timer = undefined
  }
}

/** A time relative to now, on one line, with the exact time on hover (and in `datetime`). */
export function Time(props: { value: string | null | undefined; empty?: string }) {
  const [, setTicks] = useState(0)
  useEffect(() => onTick(() => setTicks((ticks) => ticks + 1)), [])
  if (!props.value) return <span class="muted">{props.empty ?? '—'}</span>
  return (
    <time class="when" dateTime={props.value} title={exactTime(props.value)}>
      {relativeTime(Date.parse(props.value), Date.now())}
    </time>
  )
}
