import { duration } from './delivery.js'

/** Each attempt of a failing delivery and when it starts, counted from the first: the schedule's delays added up. */
export function retryTimeline(schedule: number[]): Array<{ attempt: number; after: number; total: number }> {
  let total = 0
  return [{ attempt: 1, after: 0, total: 0 }, ...schedule.map((delay, i) => ({ attempt: i + 2, after: delay, total: (total += delay) }))]
}

/** A retry schedule as the attempts it makes, in words. */
export function RetryTimeline(props: { schedule: number[]; label?: string }) {
  return (
    <ol class="ahead" data-retry-timeline aria-label={props.label}>
      {retryTimeline(props.schedule).map((step) => (
        <li>{step.attempt === 1 ? 'Attempt 1: at once' : `Attempt ${step.attempt}: ${duration(step.after)} later (${duration(step.total)} after the first)`}</li>
      ))}
    </ol>
  )
}
