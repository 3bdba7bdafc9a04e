import type { ComponentChildren } from 'preact'
import { useLayoutEffect, useRef, useState } from 'preact/hooks'

// The endpoint page's two charts, drawn as plain SVG: two small charts need no library, and SVG with classes (no
// style attributes) passes the console's strict CSP. Colours come from styles.css, so both themes apply. Each is
// drawn at the width it is shown at (one unit, one CSS pixel), so its labels keep their size on a phone.

export interface Series<T> {
  label: string
  /** A class of styles.css that colours the series (`fill` for bars, `stroke` for lines). */
  class: string
  value(point: T): number | null
}

/** The width drawn at until the chart's box has been measured. */
const INITIAL_WIDTH = 720
const HEIGHT = 180
const LEFT = 56
const BOTTOM = 22
const TOP = 8
const HOUR = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' })

/** A round axis maximum at or above `max`: 1, 2, 5 × a power of ten. */
export function niceMax(max: number): number {
  if (max <= 0) return 1
  const power = 10 ** Math.floor(Math.log10(max))
  return ([1, 2, 5, 10].map((step) => step * power).find((step) => step >= max) ?? 10 * power)
}

interface Frame {
  width: number
  x(i: number): number
  y(value: number): number
  slot: number
  top: number
}

function frame(width: number, count: number, max: number): Frame {
  const slot = (width - LEFT) / Math.max(count, 1)
  const plot = HEIGHT - BOTTOM - TOP
  return { width, slot, top: niceMax(max), x: (i) => LEFT + i * slot, y: (value) => TOP + plot - (value / niceMax(max)) * plot }
}

/** A chart's figure: its caption, the SVG drawn at the figure's own width by `draw`, and the legend. */
function Chart<T>(props: { title: string; summary: string; series: Series<T>[]; draw(width: number): ComponentChildren }) {
  const box = useRef<HTMLDivElement>(null)
  const [width, setWidth] = useState(INITIAL_WIDTH)
  useLayoutEffect(() => {
    const measured = box.current
    if (!measured) return
    const observer = new ResizeObserver(() => setWidth(Math.max(LEFT + 100, Math.floor(measured.clientWidth))))
    observer.observe(measured)
    return () => observer.disconnect()
  }, [])
  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <div ref={box}>
        <svg viewBox={`0 0 ${width} ${HEIGHT}`} role="img" aria-label={`${props.title}: ${props.summary}`}>
          {props.draw(width)}
        </svg>
      </div>
      <Legend series={props.series} />
    </figure>
  )
}

/** The y axis (0 and the maximum, with a grid line) and an hour label about every 90 pixels. */
function Axes(props: { frame: Frame; starts: string[]; unit: string }) {
  const { frame: f, starts } = props
  const every = Math.max(1, Math.ceil(starts.length / Math.max(2, Math.floor((f.width - LEFT) / 90))))
  return (
    <g class="axis">
      <line x1={LEFT} x2={f.width} y1={f.y(0)} y2={f.y(0)} />
      <line class="grid" x1={LEFT} x2={f.width} y1={f.y(f.top)} y2={f.y(f.top)} />
      <text x={LEFT - 6} y={f.y(0)} text-anchor="end" dominant-baseline="middle">
        0
      </text>
      <text x={LEFT - 6} y={f.y(f.top)} text-anchor="end" dominant-baseline="middle">
        {f.top}
        {props.unit}
      </text>
      {starts.map((start, i) =>
        i % every === 0 ? (
          <text x={f.x(i)} y={HEIGHT - 6}>
            {HOUR.format(new Date(start))}
          </text>
        ) : null,
      )}
    </g>
  )
}

function Legend<T>(props: { series: Series<T>[] }) {
  return (
    <ul class="legend">
      {props.series.map((series) => (
        <li>
          <span class={`swatch ${series.class}`} aria-hidden="true" />
          {series.label}
        </li>
      ))}
    </ul>
  )
}

/** Bars of the series stacked per bucket, the first at the bottom. */
export function StackedBars<T extends { start: string }>(props: { title: string; summary: string; points: T[]; series: Series<T>[] }) {
  const totals = props.points.map((point) => props.series.reduce((sum, series) => sum + (series.value(point) ?? 0), 0))
  const draw = (width: number) => {
    const f = frame(width, props.points.length, Math.max(0, ...totals))
    return (
      <>
        <Axes frame={f} starts={props.points.map((point) => point.start)} unit="" />
        {props.points.map((point, i) => {
          let base = 0
          return props.series.map((series) => {
            const value = series.value(point) ?? 0
            if (value === 0) return null
            const bar = <rect class={series.class} x={f.x(i) + 1} width={Math.max(f.slot - 2, 1)} y={f.y(base + value)} height={f.y(base) - f.y(base + value)} />
            base += value
            return bar
          })
        })}
      </>
    )
  }
  return <Chart title={props.title} summary={props.summary} series={props.series} draw={draw} />
}

/** One line per series; a bucket without a value breaks the line rather than drawing it at zero. */
export function Lines<T extends { start: string }>(props: { title: string; summary: string; points: T[]; series: Series<T>[]; unit: string }) {
  const values = props.points.flatMap((point) => props.series.map((series) => series.value(point) ?? 0))
  const draw = (width: number) => {
    const f = frame(width, props.points.length, Math.max(0, ...values))
    const middle = (i: number) => f.x(i) + f.slot / 2
    return (
      <>
        <Axes frame={f} starts={props.points.map((point) => point.start)} unit={props.unit} />
        {props.series.map((series) => {
          let path = ''
          let drawing = false
          props.points.forEach((point, i) => {
            const value = series.value(point)
            if (value === null) {
              drawing = false
              return
            }
            path += `${drawing ? 'L' : 'M'}${middle(i).toFixed(1)},${f.y(value).toFixed(1)}`
            drawing = true
          })
          return (
            <g class={series.class}>
              <path d={path} fill="none" />
              {props.points.map((point, i) => {
                const value = series.value(point)
                return value === null ? null : <circle cx={middle(i)} cy={f.y(value)} r={2.5} />
              })}
            </g>
          )
        })}
      </>
    )
  }
  return <Chart title={props.title} summary={props.summary} series={props.series} draw={draw} />
}
