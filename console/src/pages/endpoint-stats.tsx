import { api } from '../api.js'
import { Lines, type Series, StackedBars } from '../charts.js'
import type { EndpointStats, StatsBucket } from '../types.js'
import { ErrorNote, useLoad } from '../ui.js'

// An endpoint's last 24 hours, from GET /webhooks/endpoints/{id}/stats (its defaults: 24 hours by hour).

export interface Totals {
  succeeded: number
  failed: number
  errored: number
  attempts: number
}

export function totals(points: StatsBucket[]): Totals {
  const sum = (pick: (point: StatsBucket) => number) => points.reduce((total, point) => total + pick(point), 0)
  const succeeded = sum((point) => point.succeeded)
  const failed = sum((point) => point.failed)
  const errored = sum((point) => point.errored)
  return { succeeded, failed, errored, attempts: succeeded + failed + errored }
}

/** The share of attempts answered 2xx, as `97.5%`; undefined without attempts. */
export function successRate(counts: Totals): string | undefined {
  if (counts.attempts === 0) return undefined
  return `${+((counts.succeeded / counts.attempts) * 100).toFixed(1)}%`
}

export function useEndpointStats(endpointId: string) {
  const path = `/webhooks/endpoints/${encodeURIComponent(endpointId)}/stats`
  return useLoad(path, () => api<EndpointStats>('GET', path))
}

const OUTCOMES: Series<StatsBucket>[] = [
  { label: 'succeeded (2xx)', class: 'series-ok', value: (point) => point.succeeded },
  { label: 'failed (other answer)', class: 'series-bad', value: (point) => point.failed },
  { label: 'errored (no answer)', class: 'series-warn', value: (point) => point.errored },
]

const LATENCY: Series<StatsBucket>[] = [
  { label: 'mean', class: 'series-accent', value: (point) => point.mean_duration_ms },
  { label: 'longest', class: 'series-muted', value: (point) => point.max_duration_ms },
]

export function EndpointActivity(props: { endpointId: string }) {
  const stats = useEndpointStats(props.endpointId)
  if (stats.error !== undefined) return <ErrorNote error={stats.error} />
  if (!stats.data) return <p class="muted">Loading the last 24 hours…</p>
  const points = stats.data.data
  const counts = totals(points)
  const rate = successRate(counts)
  const answered = points.filter((point) => point.max_duration_ms !== null)
  const longest = Math.max(0, ...answered.map((point) => point.max_duration_ms ?? 0))
  return (
    <>
      <p data-activity>
        {counts.attempts === 0
          ? 'No attempts in the last 24 hours.'
          : `${counts.attempts} attempts in the last 24 hours: ${counts.succeeded} succeeded, ${counts.failed} failed, ${counts.errored} errored (${rate} success).`}
      </p>
      <div class="charts">
        <StackedBars title="Attempts per hour, by outcome" summary={`${counts.succeeded} succeeded, ${counts.failed} failed, ${counts.errored} errored`} points={points} series={OUTCOMES} />
        <Lines
          title="Attempt latency per hour (ms)"
          summary={answered.length === 0 ? 'no answered attempt' : `longest ${longest} ms`}
          points={points}
          series={LATENCY}
          unit=" ms"
        />
      </div>
    </>
  )
}
