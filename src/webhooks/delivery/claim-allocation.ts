/** An endpoint with due deliveries, as a claim reads it. */
export interface ClaimCandidate {
  id: string
  max_in_flight: number
  rate_limit: number | null
  /** The second (epoch ms) that `rate_window_count` counts claims in. */
  rate_window_start: number | null
  rate_window_count: number
  /** Deliveries other processes hold under unexpired leases. */
  in_flight_elsewhere: number | string | null
}

/** How many of an endpoint's due deliveries a claim takes; `rate` when its rate window is to be updated. */
export interface EndpointTake {
  endpointId: string
  take: number
  rate: { used: number } | null
}

export interface Allocation {
  takes: EndpointTake[]
  /** An endpoint had due deliveries its rate limit held back. */
  rateLimited: boolean
  /** Due deliveries may have been left for lack of room: an endpoint's in-flight cap, or the claim's capacity. */
  capped: boolean
}

export interface AllocationLimits {
  /** Deliveries this claim may take in all. */
  capacity: number
  /** The current second (epoch ms), the window of the endpoints' rate limits. */
  second: number
  /** This process's attempts still being sent, per endpoint. */
  inFlightHere: ReadonlyMap<string, number>
  /** Endpoints served per claim. */
  endpointsPerClaim: number
  /** A number in [0, 1): the endpoints are served in a random order, so none waits behind the others for long. */
  random: () => number
}

/**
 * Shares a claim's capacity among the endpoints with due deliveries: each gets at most its in-flight cap minus what
 * is in flight anywhere, and no more than its rate limit leaves in the current second.
 */
export function allocateClaim(candidates: readonly ClaimCandidate[], limits: AllocationLimits): Allocation {
  let remaining = limits.capacity
  let rateLimited = false
  let capped = candidates.length > limits.endpointsPerClaim
  const takes: EndpointTake[] = []
  for (const endpoint of shuffle([...candidates], limits.random).slice(0, limits.endpointsPerClaim)) {
    if (remaining === 0) {
      capped = true
      break
    }
    let allowance = endpoint.max_in_flight - Number(endpoint.in_flight_elsewhere ?? 0) - (limits.inFlightHere.get(endpoint.id) ?? 0)
    if (allowance <= 0) capped = true
    let rate: { used: number } | null = null
    if (endpoint.rate_limit !== null) {
      const used = endpoint.rate_window_start === limits.second ? endpoint.rate_window_count : 0
      if (used + allowance > endpoint.rate_limit) rateLimited = true
      allowance = Math.min(allowance, endpoint.rate_limit - used)
      rate = { used }
    }
    const take = Math.min(allowance, remaining)
    if (take <= 0) continue
    takes.push({ endpointId: endpoint.id, take, rate })
    remaining -= take
  }
  return { takes, rateLimited, capped }
}

/** Fisher–Yates, in place. */
function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[items[i], items[j]] = [items[j]!, items[i]!]
  }
  return items
}
