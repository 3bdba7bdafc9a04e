import { toRfc3339 } from '../../platform/clock.js'

/** The event a delivery carries, as the events table keeps it. */
export interface PayloadSource {
  type: string
  /** JSON text, put into the body as it is: never parsed and serialised again, so the signed bytes are the stored ones. */
  data: string
  createdAt: number
}

/**
 * The body of every attempt of an event's delivery (Standard Webhooks' recommended payload): `type`, `timestamp`
 * (the event's creation) and `data`. The same bytes on every attempt; the delivery's page shows them from here too.
 */
export function eventPayload(event: PayloadSource): string {
  return `{"type":${JSON.stringify(event.type)},"timestamp":"${toRfc3339(event.createdAt)}","data":${event.data}}`
}
