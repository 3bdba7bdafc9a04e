import { optionalRfc3339, toRfc3339 } from '../../platform/clock.js'
import type { EndpointDisabledReason, EndpointStatus, WebhookEndpointsTable } from '../../platform/storage/schema.js'

/** An endpoint as the API shows it; its secret only ever through the secret routes. */
export interface EndpointView {
  id: string
  url: string
  description: string
  status: EndpointStatus
  disabled_reason: EndpointDisabledReason | null
  disabled_at: string | null
  metadata: Record<string, string>
  rate_limit: number | null
  max_in_flight: number
  /** The client whose back-channel logout tokens this endpoint carries; null for the account's own endpoints. */
  client_id: string | null
  created_at: string
  updated_at: string
}

export function toView(row: WebhookEndpointsTable): EndpointView {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    status: row.status,
    disabled_reason: row.disabled_reason,
    disabled_at: optionalRfc3339(row.disabled_at),
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    rate_limit: row.rate_limit,
    max_in_flight: row.max_in_flight,
    client_id: row.client_id,
    created_at: toRfc3339(row.created_at),
    updated_at: toRfc3339(row.updated_at),
  }
}
